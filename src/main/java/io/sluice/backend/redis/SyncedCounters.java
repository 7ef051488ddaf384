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
 * when its first unsynced query is allowed, and again when its unsynced count reaches
 * {@link #heldAtMost} (the sync may be holding it back). A slot's count is zeroed when the janitor
 * empties it, so that the next domain in it starts with none.
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

    /** What a domain may hold back from Redis ({@link DeltaSync}): 1/64 of its budget's queries. */
    static long heldAtMost(Policy budget) {
        return budget.queries() >>> 6;
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
            if (before == 0 || before + 1 == heldAtMost(budget)) {
                dirty.offer(new Dirty(slot, CounterTable.fingerprintOf(table.key(slot)), domain.toKey()));
            }
        }
        return verdict;
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
