package io.sluice.limit;

/**
 * Windows aligned to multiples of the window length since the Unix epoch, so independent
 * instances agree on where windows start. A query is allowed while the window's count is below the
 * ceiling: exactly {@code queries} per window (fewer for unverified queries, {@link Policy#unverified}).
 *
 * <p>Word: window index (low 32 bits of it) in the high half, the count (at least 1) in the low
 * half. A refused query writes nothing, so a flood of refusals for one domain reads a shared cache
 * line and never bounces it between cores.
 */
final class FixedWindow implements Algorithm {

    @Override
    public long acquire(long word, Policy p, long now) {
        int window = (int) (now / p.windowNanos());
        if ((int) (word >>> 32) != window) {
            return p.ceiling() == 0 ? REFUSE : ((long) window << 32) | 1;
        }
        return (word & 0xFFFFFFFFL) >= p.ceiling() ? REFUSE : word + 1;
    }

    @Override
    public long leaseUntil(long now, Policy p) {
        return (now / p.windowNanos() + 1) * p.windowNanos();
    }

    @Override
    public long addToCurrent(long word, Policy p, long now, long queries) {
        int window = (int) (now / p.windowNanos());
        long count = (int) (word >>> 32) == window ? word & 0xFFFFFFFFL : 0;
        return ((long) window << 32) | Math.max(1, Math.min(count + queries, Integer.MAX_VALUE));
    }

    @Override
    public long idleIn(long word, Policy p, long now) {
        long window = now / p.windowNanos();
        return (int) (word >>> 32) == (int) window ? (window + 1) * p.windowNanos() - now : 0;
    }
}
