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
        long counts = countsAt(word, window);
        long previous = counts >>> 24;
        long current = counts & COUNT_MASK;
        double previousShare = 1.0 - (double) (now - index * p.windowNanos()) / p.windowNanos();
        if (previous * previousShare + current >= p.ceiling()) {
            return REFUSE;
        }
        return ((long) window << 48) | (previous << 24) | Math.min(current + 1, COUNT_MASK);
    }

    @Override
    public long addToCurrent(long word, Policy p, long now, long queries) {
        int window = (int) ((now / p.windowNanos()) & WINDOW_MASK);
        long counts = countsAt(word, window);
        long previous = counts >>> 24;
        long current = counts & COUNT_MASK;
        return ((long) window << 48) | (previous << 24) | Math.max(1, Math.min(current + queries, COUNT_MASK));
    }

    /**
     * The word's two counts as seen from {@code window}: previous in bits 24-47, current below.
     * The window after the stored one sees the stored current count as its previous one.
     */
    private static long countsAt(long word, int window) {
        int stored = (int) (word >>> 48);
        if (stored == window) {
            return word & ((1L << 48) - 1);
        }
        return stored == ((window - 1) & WINDOW_MASK) ? (word & COUNT_MASK) << 24 : 0;
    }

    /** The stored window's count weighs on decisions until the end of the window after it. */
    @Override
    public long idleIn(long word, Policy p, long now) {
        long index = now / p.windowNanos();
        int stored = (int) (word >>> 48);
        if (stored == (int) (index & WINDOW_MASK)) {
            return (index + 2) * p.windowNanos() - now;
        }
        return stored == (int) ((index - 1) & WINDOW_MASK) ? (index + 1) * p.windowNanos() - now : 0;
    }
}
