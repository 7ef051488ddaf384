package io.sluice.limit;

import io.sluice.domain.DomainProbe;

/** What the limit stage asks of the limiter for one query, for tests and benchmarks of the limiter alone. */
public final class Decide {
    private Decide() {
    }

    /** Counts a query for {@code domain}: {@link DomainLimiter#NONE} when it is allowed, else the slot whose budget it is over. */
    public static int refusedBy(DomainLimiter limiter, DomainProbe domain) {
        int c = limiter.counterFor(domain);
        return c == DomainLimiter.NONE || limiter.tryAcquire(c, domain, limiter.clock().epochNanos()) ? DomainLimiter.NONE : c;
    }

    /** Counts a query for {@code domain}: whether it is allowed. */
    public static boolean allowed(DomainLimiter limiter, DomainProbe domain) {
        return refusedBy(limiter, domain) == DomainLimiter.NONE;
    }
}
