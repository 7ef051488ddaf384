package io.sluice.limit;

/**
 * A token bucket of capacity {@code burst}, refilled at {@code queries} per window, kept as the
 * generic cell rate algorithm: the word is the theoretical arrival time (TAT), the instant the
 * bucket would be full again. A query is allowed when, after it, the bucket would be full no later
 * than {@code burst} emission intervals from now.
 */
final class TokenBucket implements Algorithm {
    /** Intervals of debt at most: a million queries' worth, far below a 64-bit word's reach. */
    private static final long MAX_DEBT = 1 << 20;

    @Override
    public long acquire(long tat, Policy p, long now) {
        long interval = interval(p);
        long next = Math.max(tat, now) + interval;
        return next - now > interval * p.burstCeiling() ? REFUSE : next;
    }

    /**
     * Each query takes its token even from an empty bucket: queries allowed elsewhere are a debt
     * this instance's bucket pays back before it allows more. The debt is capped at {@link #MAX_DEBT}
     * emission intervals, so that the word stays far from overflow.
     */
    @Override
    public long addToCurrent(long tat, Policy p, long now, long queries) {
        return Math.max(tat, now) + interval(p) * Math.min(queries, MAX_DEBT);
    }

    @Override
    public long idleIn(long tat, Policy p, long now) {
        return Math.max(0, tat - now);
    }

    private static long interval(Policy p) {
        return Math.max(1, p.windowNanos() / p.queries());
    }
}
