package io.sluice.limit;

import java.time.Duration;

/**
 * A domain's budget: {@code queries} per {@code window}, and for the token bucket a capacity of
 * {@code burst}. Shared by all counters with the same setting.
 */
public record Policy(long queries, long windowNanos, long burst) {
    /** No budget at all: such a domain is never counted. Compared by identity. */
    public static final Policy UNLIMITED = new Policy(0, 1, 0);

    /** {@code queries} 0 means {@link #UNLIMITED}; {@code burst} 0 means {@code queries}. */
    public static Policy of(long queries, Duration window, long burst) {
        return queries == 0 ? UNLIMITED : new Policy(queries, window.toNanos(), burst == 0 ? queries : burst);
    }

    /** {@code share} of this budget, at least one query (and one token) per window. */
    public Policy scaled(double share) {
        if (this == UNLIMITED) {
            return this;
        }
        return new Policy(Math.max(1, (long) (queries * share)), windowNanos, Math.max(1, (long) (burst * share)));
    }

    @Override
    public String toString() {
        if (this == UNLIMITED) {
            return "unlimited";
        }
        long ms = windowNanos / 1_000_000;
        String w = ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
        return queries + " queries per " + w;
    }
}
