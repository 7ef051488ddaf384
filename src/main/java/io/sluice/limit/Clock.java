package io.sluice.limit;

/**
 * Time for the limiters, in nanoseconds since the Unix epoch, so that fixed windows start at the
 * same instants in every sluice. Injected, so that tests move time by hand and never sleep.
 */
@FunctionalInterface
public interface Clock {
    long epochNanos();

    /**
     * The system clock read through {@link System#nanoTime()} (a vDSO call, no allocation) from an
     * epoch offset taken once at start: monotonic, and as close to wall time as the offset.
     */
    static Clock system() {
        long offset = System.currentTimeMillis() * 1_000_000L - System.nanoTime();
        return () -> System.nanoTime() + offset;
    }
}
