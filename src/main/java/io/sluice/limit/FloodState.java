package io.sluice.limit;

/**
 * What flood detection ({@code flood.Floods}) keeps beside the counters' {@link CounterTable#FLOODED}
 * flag, told by the limiter when a flagged counter goes or its flag is dropped, and written out by
 * the {@link Janitor}. Every call is off the event loops but {@link #emptied}'s, which the janitor
 * makes too; none may block.
 */
public interface FloodState {
    /**
     * Whether the counter of {@code slot}, flagged flooded and idle at {@code now} under policy
     * {@code p}, is kept all the same: its flood paused, and may resume flagged, cut from its first
     * query, rather than with a whole budget for its first window. On the janitor's thread.
     */
    boolean keeps(int slot, Policy p, long now);

    /** The counter of the flooded domain with {@code fingerprint} was retired: nothing asked for it for a window. */
    void forgotten(long fingerprint);

    /** {@code slot}, of the domain with {@code fingerprint}, was emptied: the next domain in it starts unwatched. */
    void emptied(int slot, long fingerprint);

    /** The domain with {@code fingerprint} is no longer flooded, by a change of its budget: no line for it. */
    void cleared(long fingerprint);

    /** Writes what changed since the last call, each line after {@code prefix}; on the janitor's thread. */
    void drain(String prefix);
}
