package io.sluice.limit;

import io.sluice.domain.DomainProbe;

/** What the limit stage asks of the limiter for one query, for tests and benchmarks of the limiter alone. */
public final class Decide {
    private Decide() {
    }

    /** Counts a query for {@code domain}: null when it is allowed, else the counter whose budget it is over. */
    public static Counter refusedBy(DomainLimiter limiter, DomainProbe domain) {
        Counter c = limiter.counterFor(domain);
        return c == null || limiter.tryAcquire(c) ? null : c;
    }
}
