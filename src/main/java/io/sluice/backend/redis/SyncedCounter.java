package io.sluice.backend.redis;

import io.sluice.domain.DomainKey;
import io.sluice.domain.DomainProbe;
import io.sluice.limit.Counter;
import io.sluice.limit.Policy;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A counter of Redis async mode: the queries the loops allowed since the sync thread last took
 * them, and the sync thread's view of the domain's word in Redis. A subclass of its own, so that
 * the memory backend's counters carry none of it.
 */
final class SyncedCounter extends Counter {
    private static final VarHandle UNSYNCED;

    static {
        try {
            UNSYNCED = MethodHandles.lookup().findVarHandle(SyncedCounter.class, "unsynced", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Allowed by the loops and not yet taken by the sync thread. */
    @SuppressWarnings("unused") // through UNSYNCED
    private volatile int unsynced;
    /** The word Redis held when this instance last read or set it. The sync thread's only. */
    long known;
    /** Taken from {@code unsynced} and not yet in Redis. The sync thread's only. */
    int pending;

    SyncedCounter(DomainProbe domain, Policy policy) {
        super(domain, policy);
    }

    SyncedCounter(DomainKey domain, Policy policy) {
        super(domain, policy);
    }

    /** Counts one allowed query; returns the count before. */
    int addUnsynced() {
        return (int) UNSYNCED.getAndAdd(this, 1);
    }

    /** Takes the unsynced count, leaving 0. */
    int takeUnsynced() {
        return (int) UNSYNCED.getAndSet(this, 0);
    }

    int unsynced() {
        return (int) UNSYNCED.getVolatile(this);
    }
}
