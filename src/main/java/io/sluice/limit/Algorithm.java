package io.sluice.limit;

/**
 * How a counter's word moves with time and queries. Implementations hold no state of their own:
 * everything is in the {@link Counter}'s word, updated by compare-and-set.
 */
interface Algorithm {
    int ALLOWED = 0;
    int REFUSED = 1;
    /** The counter was retired by the janitor: look the domain up again. */
    int RETIRED = 2;

    /** Counts one query if the budget allows it. */
    int tryAcquire(Counter c, long now);

    /**
     * Retires {@code c} (swaps in {@link Counter#DEAD}) if forgetting it changes no future
     * decision; true if it did.
     */
    boolean retireIfIdle(Counter c, long now);
}
