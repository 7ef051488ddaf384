package io.sluice.limit;

/**
 * Windows aligned to multiples of the window length since the Unix epoch, so independent
 * instances agree on where windows start. A query is allowed while the window's count is below the
 * limit: exactly {@code queries} per window.
 *
 * <p>Word: window index (low 32 bits of it) in the high half, the count in the low half. A refused
 * query writes nothing, so a flood of refusals for one domain reads a shared cache line and never
 * bounces it between cores.
 */
final class FixedWindow implements Algorithm {

    @Override
    public int tryAcquire(Counter c, long now) {
        Policy p = c.policy;
        int window = (int) (now / p.windowNanos());
        while (true) {
            long s = c.get();
            if (s == Counter.DEAD) {
                return RETIRED;
            }
            long next;
            if ((int) (s >>> 32) != window) {
                next = ((long) window << 32) | 1;
            } else if ((s & 0xFFFFFFFFL) >= p.queries()) {
                return REFUSED;
            } else {
                next = s + 1;
            }
            if (c.compareAndSet(s, next)) {
                return ALLOWED;
            }
        }
    }

    @Override
    public boolean retireIfIdle(Counter c, long now) {
        long s = c.get();
        int window = (int) (now / c.policy.windowNanos());
        return s != Counter.DEAD && (int) (s >>> 32) != window && c.compareAndSet(s, Counter.DEAD);
    }
}
