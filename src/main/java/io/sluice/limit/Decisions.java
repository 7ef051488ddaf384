package io.sluice.limit;

import io.sluice.domain.DomainKey;
import io.sluice.domain.DomainProbe;
import io.sluice.pipeline.ParkedQuery;
import io.sluice.pipeline.Query;
import java.util.concurrent.ScheduledExecutorService;

/**
 * How one event loop decides a counted query: at once from the limiter's own counters (memory,
 * Chronicle Map, Redis async), or later, when a shared store has answered (Redis exact), with the
 * query parked meanwhile. The limit stage asks; the backend answers.
 */
public interface Decisions {
    int ALLOWED = 0;
    int REFUSED = 1;
    /** A copy of the query is kept, and its verdict comes later on this loop through {@link Verdicts}. */
    int PARKED = 2;

    /**
     * Decides a query for {@code domain}, whose counter is {@code slot} of the limiter: {@link #ALLOWED},
     * {@link #REFUSED} or {@link #PARKED}.
     */
    int decide(int slot, DomainProbe domain, Query q);

    /** The end of a read burst: what was parked goes out. */
    default void endOfBurst() {
    }

    /** Queries parked now. */
    default int parked() {
        return 0;
    }

    /** Where the verdict on a parked query goes, on its loop. The receiver releases nothing. */
    interface Verdicts {
        void allow(ParkedQuery q);

        /** {@code q} is over the budget of {@code domain}, whose counter was {@code slot}. */
        void refuse(ParkedQuery q, int slot, DomainKey domain);
    }

    /** Makes the decisions of each loop: what a backend supplies. */
    @FunctionalInterface
    interface Maker {
        /** @param loop the event loop the decisions belong to; verdicts are run on it */
        Decisions forLoop(ScheduledExecutorService loop, Verdicts verdicts);
    }

    /** The limiter's own counters decide at once: memory and Chronicle Map. */
    static Maker local(DomainLimiter limiter) {
        Decisions d = (slot, domain, q) -> limiter.tryAcquire(slot, domain, q.now(), q.verified()) ? ALLOWED : REFUSED;
        return (loop, verdicts) -> d;
    }
}
