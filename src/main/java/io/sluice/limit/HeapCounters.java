package io.sluice.limit;

import java.util.function.LongUnaryOperator;

/**
 * Words kept in the counters themselves, moved by compare-and-set: a decision is one read and at
 * most a few CAS attempts, never a lock. A store that keeps the words elsewhere too (Redis) mirrors
 * them here with {@link #word}, {@link #retired}, {@link #compareAndSet} and {@link #replace}.
 */
public final class HeapCounters implements CounterStore {

    /** {@code c}'s word; 0 (a domain never seen) once the janitor has retired it. */
    public static long word(Counter c) {
        long s = c.get();
        return s == Counter.DEAD ? 0 : s;
    }

    /** Whether the janitor has retired {@code c}: its word is gone for good. */
    public static boolean retired(Counter c) {
        return c.get() == Counter.DEAD;
    }

    /** Sets {@code c}'s word from {@code expected} to {@code next}: false when it held another, or was retired. */
    public static boolean compareAndSet(Counter c, long expected, long next) {
        return expected != Counter.DEAD && next != Counter.DEAD && c.compareAndSet(expected, next);
    }

    /**
     * Sets {@code c}'s word to {@code next} of the word it holds, unless the janitor has retired it
     * (a retired counter stays {@link Counter#DEAD}). {@code next} may run more than once.
     */
    public static void replace(Counter c, LongUnaryOperator next) {
        while (true) {
            long s = c.get();
            long n;
            if (s == Counter.DEAD || (n = next.applyAsLong(s)) == Counter.DEAD || c.compareAndSet(s, n)) {
                return;
            }
        }
    }

    @Override
    public int acquire(Counter c, Algorithm algorithm, long now) {
        while (true) {
            long s = c.get();
            if (s == Counter.DEAD) {
                return RETIRED;
            }
            long next = algorithm.acquire(s, c.budget(), now);
            if (next == Algorithm.REFUSE) {
                return REFUSED;
            }
            if (c.compareAndSet(s, next)) {
                return ALLOWED;
            }
        }
    }

    /** Swaps in {@link Counter#DEAD}, so that no update can land on a counter that has left the table. */
    @Override
    public boolean release(Counter c, Algorithm algorithm, long now) {
        long s = c.get();
        return s != Counter.DEAD && algorithm.idle(s, c.policy, now) && c.compareAndSet(s, Counter.DEAD);
    }

    @Override
    public String describe() {
        return "memory";
    }
}
