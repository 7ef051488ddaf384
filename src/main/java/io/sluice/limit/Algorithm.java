package io.sluice.limit;

import io.sluice.config.LimitSettings;

/**
 * How a domain's 64-bit word moves with time and queries, as pure functions of the word: the
 * caller owns the word and applies the result, by compare-and-set in memory or under the entry's
 * lock in a Chronicle Map. A word of 0 is a domain never seen (or forgotten).
 *
 * <p>No algorithm ever stores a word whose low 24 bits are all zero and whose sign bit is set, so
 * {@link #REFUSE} and {@link Counter#DEAD} can never be mistaken for a state.
 */
public interface Algorithm {
    /** Returned by {@link #acquire} when the query is over the budget; the word stays as it was. */
    long REFUSE = Long.MIN_VALUE | (1L << 32);

    /** The word after counting one more query at {@code now}, or {@link #REFUSE}. */
    long acquire(long word, Policy p, long now);

    /**
     * The word with {@code queries} more counted in the current window, whatever the budget:
     * queries another process allowed. Not offered by the token bucket.
     */
    default long addToCurrent(long word, Policy p, long now, long queries) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " keeps no per-window count");
    }

    /** Whether forgetting the word (back to 0) changes no decision from {@code now} on. */
    boolean idle(long word, Policy p, long now);

    static Algorithm of(LimitSettings.Algorithm a) {
        return switch (a) {
            case FIXED_WINDOW -> new FixedWindow();
            case SLIDING_WINDOW -> new SlidingWindow();
            case TOKEN_BUCKET -> new TokenBucket();
        };
    }
}
