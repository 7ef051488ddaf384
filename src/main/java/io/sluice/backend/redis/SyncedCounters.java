package io.sluice.backend.redis;

import io.sluice.domain.DomainKey;
import io.sluice.domain.DomainProbe;
import io.sluice.limit.Algorithm;
import io.sluice.limit.CounterStore;
import io.sluice.limit.CounterTable;
import io.sluice.limit.HeapCounters;
import io.sluice.limit.Policy;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The store of Redis async mode: words in the counter table, as {@link HeapCounters} keeps them,
 * and each query allowed also counted per slot for {@link DeltaSync}, which gets a domain queued
 * when its first unsynced query is allowed, and again at each multiple of {@link #heldAtMost}
 * (the sync may be holding it back); a slot with unsynced counts is not idle. A slot's count is
 * zeroed when the janitor empties it, so that the next domain in it starts with none.
 */
final class SyncedCounters implements CounterStore {
    private static final VarHandle INTS = MethodHandles.arrayElementVarHandle(int[].class);

    /** A domain with queries allowed since the sync thread last took them. */
    record Dirty(int slot, long fingerprint, DomainKey domain) {
    }

    private final HeapCounters heap = new HeapCounters();
    final ConcurrentLinkedQueue<Dirty> dirty = new ConcurrentLinkedQueue<>();
    /** Per slot, allowed by the loops and not yet taken by the sync thread; sized by {@link #bind}. */
    private int[] unsynced = new int[0];

    /** The smallest {@link #heldAtMost} there is: a budget whose share is below it is pushed every pass. */
    private static final long LEAST_HELD = 64;

    /**
     * What a domain may hold back from Redis ({@link DeltaSync}): 1/64 of its budget's queries
     * (of its burst, if smaller), rounded down to a power of two; 0, nothing, under 4,096. The
     * loops queue the domain at each multiple of it, which a budget cut by a reload or a flood
     * cannot step over; after a cut to nothing (under 4,096), at each power of two from 64, so
     * that a domain held then is pushed once its count here has at most doubled.
     */
    static long heldAtMost(Policy budget) {
        long share = Long.highestOneBit(Math.min(budget.queries(), budget.burst()) >>> 6);
        return share < LEAST_HELD ? 0 : share;
    }

    @Override
    public void bind(CounterTable table) {
        unsynced = new int[table.capacity() + 1];
    }

    @Override
    public int acquire(CounterTable table, int slot, DomainProbe domain, Policy budget, Algorithm algorithm,
                       long now) {
        int verdict = heap.acquire(table, slot, domain, budget, algorithm, now);
        if (verdict == ALLOWED) {
            int before = (int) INTS.getAndAdd(unsynced, slot, 1);
            long held = heldAtMost(budget);
            // a budget with no share (a cut to under 4,096 may find the domain holding counts) at
            // each power of two from LEAST_HELD: it is pushed soon, its allocations a few a pass
            if (before == 0 || (held != 0 ? (before + 1 & held - 1) == 0
                    : before + 1 >= LEAST_HELD && (before + 1 & before) == 0)) {
                dirty.offer(new Dirty(slot, CounterTable.fingerprintOf(table.key(slot)), domain.toKey()));
            }
        }
        return verdict;
    }

    /** Not while it holds counts the sync has not taken: retiring the slot would drop them. */
    @Override
    public boolean idle(CounterTable table, int slot, long word, Policy p, Algorithm algorithm, long now) {
        return unsynced(slot) == 0 && heap.idle(table, slot, word, p, algorithm, now);
    }

    @Override
    public void emptied(int slot) {
        INTS.setVolatile(unsynced, slot, 0);
    }

    /** Takes {@code slot}'s unsynced count, leaving 0. */
    int takeUnsynced(int slot) {
        return (int) INTS.getAndSet(unsynced, slot, 0);
    }

    int unsynced(int slot) {
        return (int) INTS.getVolatile(unsynced, slot);
    }

    @Override
    public String describe() {
        return "memory"; // the Redis backend describes the sharing
    }
}
