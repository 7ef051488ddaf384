package io.sluice.limit;

/**
 * A token bucket of capacity {@code burst}, refilled at {@code queries} per window, kept as the
 * generic cell rate algorithm: the word is the theoretical arrival time (TAT), the instant the
 * bucket would be full again. A query is allowed when, after it, the bucket would be full no later
 * than {@code burst} emission intervals from now.
 */
final class TokenBucket implements Algorithm {

    @Override
    public long acquire(long tat, Policy p, long now) {
        long interval = Math.max(1, p.windowNanos() / p.queries());
        long next = Math.max(tat, now) + interval;
        return next - now > interval * p.burst() ? REFUSE : next;
    }

    @Override
    public boolean idle(long tat, Policy p, long now) {
        return tat <= now;
    }
}
