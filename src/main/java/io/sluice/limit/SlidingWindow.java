package io.sluice.limit;

/**
 * The two-window approximation of a sliding window: the previous fixed window's count, weighted by
 * the share of it still inside a window ending now, plus the current count. It removes the burst of
 * up to twice the limit that a fixed window lets through across an edge.
 *
 * <p>Word: the low 16 bits of the current window index, the previous window's count (24 bits) and
 * the current one (24 bits, at least 1). Counts stop at 16,777,215 per window; an entry idle long
 * enough for its 16-bit index to come round again (65,536 windows) is forgotten by the janitor
 * long before.
 */
final class SlidingWindow implements Algorithm {
    private static final long COUNT_MASK = 0xFFFFFF;
    private static final int WINDOW_MASK = 0xFFFF;

    @Override
    public long acquire(long word, Policy p, long now) {
        long index = now / p.windowNanos();
        int window = (int) (index & WINDOW_MASK);
        int stored = (int) (word >>> 48);
        long previous;
        long current;
        if (stored == window) {
            previous = (word >>> 24) & COUNT_MASK;
            current = word & COUNT_MASK;
        } else if (stored == ((window - 1) & WINDOW_MASK)) {
            previous = word & COUNT_MASK;
            current = 0;
        } else {
            previous = 0;
            current = 0;
        }
        double previousShare = 1.0 - (double) (now - index * p.windowNanos()) / p.windowNanos();
        if (previous * previousShare + current >= p.queries()) {
            return REFUSE;
        }
        return ((long) window << 48) | (previous << 24) | Math.min(current + 1, COUNT_MASK);
    }

    @Override
    public long addToCurrent(long word, Policy p, long now, long queries) {
        int window = (int) ((now / p.windowNanos()) & WINDOW_MASK);
        int stored = (int) (word >>> 48);
        long previous = stored == window ? (word >>> 24) & COUNT_MASK
                : stored == ((window - 1) & WINDOW_MASK) ? word & COUNT_MASK : 0;
        long current = stored == window ? word & COUNT_MASK : 0;
        return ((long) window << 48) | (previous << 24) | Math.max(1, Math.min(current + queries, COUNT_MASK));
    }

    @Override
    public boolean idle(long word, Policy p, long now) {
        long index = now / p.windowNanos();
        int stored = (int) (word >>> 48);
        return stored != (int) (index & WINDOW_MASK) && stored != (int) ((index - 1) & WINDOW_MASK);
    }
}
