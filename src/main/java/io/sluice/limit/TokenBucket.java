package io.sluice.limit;

/**
 * A token bucket of capacity {@code burst}, refilled at {@code queries} per window, kept as the
 * generic cell rate algorithm: the word is the theoretical arrival time (TAT), the instant the
 * bucket would be full again. A query is allowed when, after it, the bucket would be full no later
 * than {@code burst} emission intervals from now.
 */
final class TokenBucket implements Algorithm {

    @Override
    public int tryAcquire(Counter c, long now) {
        Policy p = c.policy;
        long interval = Math.max(1, p.windowNanos() / p.queries());
        long horizon = interval * p.burst();
        while (true) {
            long tat = c.get();
            if (tat == Counter.DEAD) {
                return RETIRED;
            }
            long next = Math.max(tat, now) + interval;
            if (next - now > horizon) {
                return REFUSED;
            }
            if (c.compareAndSet(tat, next)) {
                return ALLOWED;
            }
        }
    }

    @Override
    public boolean retireIfIdle(Counter c, long now) {
        long tat = c.get();
        return tat != Counter.DEAD && tat <= now && c.compareAndSet(tat, Counter.DEAD);
    }
}
