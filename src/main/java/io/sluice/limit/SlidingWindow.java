package io.sluice.limit;

/**
 * The two-window approximation of a sliding window: the previous fixed window's count, weighted by
 * the share of it still inside a window ending now, plus the current count. It removes the burst of
 * up to twice the limit that a fixed window lets through across an edge.
 *
 * <p>Word: the low 16 bits of the current window index, the previous window's count (24 bits) and
 * the current one (24 bits). Counts stop at 16,777,215 per window; an entry idle long enough for
 * its 16-bit index to come round again (65,536 windows) is retired by the janitor long before.
 */
final class SlidingWindow implements Algorithm {
    private static final long COUNT_MASK = 0xFFFFFF;
    private static final int WINDOW_MASK = 0xFFFF;

    @Override
    public int tryAcquire(Counter c, long now) {
        Policy p = c.policy;
        long index = now / p.windowNanos();
        int window = (int) (index & WINDOW_MASK);
        double previousShare = 1.0 - (double) (now - index * p.windowNanos()) / p.windowNanos();
        while (true) {
            long s = c.get();
            if (s == Counter.DEAD) {
                return RETIRED;
            }
            int stored = (int) (s >>> 48);
            long previous;
            long current;
            if (stored == window) {
                previous = (s >>> 24) & COUNT_MASK;
                current = s & COUNT_MASK;
            } else if (stored == ((window - 1) & WINDOW_MASK)) {
                previous = s & COUNT_MASK;
                current = 0;
            } else {
                previous = 0;
                current = 0;
            }
            if (previous * previousShare + current >= p.queries()) {
                return REFUSED;
            }
            long next = ((long) window << 48) | (previous << 24) | Math.min(current + 1, COUNT_MASK);
            if (c.compareAndSet(s, next)) {
                return ALLOWED;
            }
        }
    }

    @Override
    public boolean retireIfIdle(Counter c, long now) {
        long s = c.get();
        long index = now / c.policy.windowNanos();
        int stored = (int) (s >>> 48);
        boolean recent = stored == (int) (index & WINDOW_MASK) || stored == (int) ((index - 1) & WINDOW_MASK);
        return s != Counter.DEAD && !recent && c.compareAndSet(s, Counter.DEAD);
    }
}
