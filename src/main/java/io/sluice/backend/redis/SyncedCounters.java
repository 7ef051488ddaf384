package io.sluice.backend.redis;

import io.sluice.domain.DomainKey;
import io.sluice.domain.DomainProbe;
import io.sluice.limit.Algorithm;
import io.sluice.limit.Counter;
import io.sluice.limit.CounterStore;
import io.sluice.limit.HeapCounters;
import io.sluice.limit.Policy;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The store of Redis async mode: words in memory, as {@link HeapCounters} keeps them, and each
 * query allowed also counted for {@link DeltaSync}, which queues a domain once when its first
 * unsynced query is allowed.
 */
final class SyncedCounters implements CounterStore {
    private final HeapCounters heap = new HeapCounters();
    /** Domains with queries allowed since the sync thread last took them. */
    final ConcurrentLinkedQueue<SyncedCounter> dirty = new ConcurrentLinkedQueue<>();

    @Override
    public int acquire(Counter c, Algorithm algorithm, long now) {
        int verdict = heap.acquire(c, algorithm, now);
        if (verdict == ALLOWED && ((SyncedCounter) c).addUnsynced() == 0) {
            dirty.offer((SyncedCounter) c);
        }
        return verdict;
    }

    @Override
    public boolean release(Counter c, Algorithm algorithm, long now) {
        return heap.release(c, algorithm, now);
    }

    @Override
    public Counter newCounter(DomainProbe domain, Policy p) {
        return new SyncedCounter(domain, p);
    }

    @Override
    public Counter newCounter(DomainKey domain, Policy p) {
        return new SyncedCounter(domain, p);
    }

    @Override
    public String describe() {
        return "memory"; // the Redis backend describes the sharing
    }
}
