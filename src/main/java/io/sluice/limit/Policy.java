package io.sluice.limit;

import java.time.Duration;

/**
 * A domain's budget: {@code queries} per {@code window}, and for the token bucket a capacity of
 * {@code burst}. Shared by all counters with the same setting.
 *
 * <p>{@code ceiling} and {@code burstCeiling} are where the algorithms refuse: the count a window
 * may reach, and the bucket's depth. They are {@code queries} and {@code burst} but in a budget
 * {@linkplain #unverified as unverified queries see it}, which shares the word, the window and the
 * rate with the whole budget and stops lower.
 */
public record Policy(long queries, long windowNanos, long burst, long ceiling, long burstCeiling) {
    /** No budget at all: such a domain is never counted. Compared by identity. */
    public static final Policy UNLIMITED = new Policy(0, 1, 0);

    public Policy(long queries, long windowNanos, long burst) {
        this(queries, windowNanos, burst, queries, burst);
    }

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

    /**
     * This budget as queries from clients that did not prove their address see it
     * ({@code limits.verified-share}): counted in the same word, refused once the window's count
     * (or the bucket's debt) reaches {@code 1 - verifiedShare} of it, so that {@code verifiedShare}
     * of it is left for verified clients whatever the others send.
     */
    public Policy unverified(double verifiedShare) {
        if (this == UNLIMITED) {
            return this;
        }
        double left = 1 - verifiedShare;
        // the epsilon keeps 0.7 of 10 at 7 where binary fractions would make it 6.999...
        return new Policy(queries, windowNanos, burst, (long) Math.floor(queries * left + 1e-9),
                (long) Math.floor(burst * left + 1e-9));
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
