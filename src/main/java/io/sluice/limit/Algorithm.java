package io.sluice.limit;

import io.sluice.config.LimitSettings;

/**
 * How a domain's 64-bit word moves with time and queries, as pure functions of the word: the
 * caller owns the word and applies the result, by compare-and-set in memory, under the entry's
 * lock in a Chronicle Map, or by a compare-and-set script in Redis. This is the only place the
 * algorithms are written; every backend stores words. A word of 0 is a domain never seen (or
 * forgotten).
 *
 * <p>No algorithm ever stores a word whose low 24 bits are all zero and whose sign bit is set, so
 * {@link #REFUSE} and {@link CounterTable#DEAD} can never be mistaken for a state.
 */
public interface Algorithm {
    /** Returned by {@link #acquire} when the query is over the budget; the word stays as it was. */
    long REFUSE = Long.MIN_VALUE | (1L << 32);

    /** Whether some algorithm may store {@code word}: false for {@link #REFUSE} and {@link CounterTable#DEAD}. */
    static boolean isWord(long word) {
        return word >= 0 || (word & 0xFFFFFF) != 0;
    }

    /** The word after counting one more query at {@code now}, or {@link #REFUSE}. */
    long acquire(long word, Policy p, long now);

    /**
     * The word with {@code queries} (at least 1) more counted at {@code now}, whatever the budget:
     * queries allowed elsewhere, or before the word was learnt.
     */
    long addToCurrent(long word, Policy p, long now, long queries);

    /**
     * Nanoseconds from {@code now} until forgetting the word (back to 0) changes no decision; 0
     * when that is already so. A word kept outside the process expires then.
     */
    long idleIn(long word, Policy p, long now);

    /**
     * Until when queries added at {@code now} may be spent later without being counted again (a
     * lease, Redis exact mode): the end of {@code now}'s window where counts last exactly a window;
     * 0 where they do not (a sliding window weighs them into the next, a token bucket refills),
     * which lease nothing.
     */
    default long leaseUntil(long now, Policy p) {
        return 0;
    }

    /** Whether forgetting the word (back to 0) changes no decision from {@code now} on. */
    default boolean idle(long word, Policy p, long now) {
        return idleIn(word, p, now) <= 0;
    }

    static Algorithm of(LimitSettings.Algorithm a) {
        return switch (a) {
            case FIXED_WINDOW -> new FixedWindow();
            case SLIDING_WINDOW -> new SlidingWindow();
            case TOKEN_BUCKET -> new TokenBucket();
        };
    }
}
