package io.sluice.config;

import java.time.Duration;

/**
 * The answer cache. Documented key by key in {@code conf/sluice.yml}.
 *
 * @param size             entries at most; 0 turns the cache off
 * @param maxBytes         bytes the entries may take on the heap, keys and bookkeeping included
 * @param maxTtl           the longest an answer is served from the cache, whatever its TTLs say
 * @param maxNegativeTtl   the same for NXDOMAIN and NODATA, kept for their SOA's minimum (RFC 2308)
 * @param servfailTtl      how long an upstream's SERVFAIL is served from the cache; 0: not at all
 * @param staleTtl         how long past its expiry an answer may be served stale when no upstream
 *                         answers (RFC 8767); 0: never
 * @param staleRefreshTime once the upstreams failed to refresh an answer, how long it is served stale
 *                         without asking them (RFC 8767's failure recheck timer); 0: ask each time
 * @param staleWhenLimited a query over its domain's budget gets a stale answer rather than the action
 * @param prefetch         a hit in the last tenth of an answer's lifetime asks the upstream again
 * @param networksPerQuestion answers one question keeps for Client Subnet networks at most,
 *                         rounded up to a multiple of 8
 */
public record CacheSettings(int size, long maxBytes, Duration maxTtl, Duration maxNegativeTtl, Duration servfailTtl,
                            Duration staleTtl, Duration staleRefreshTime, boolean staleWhenLimited, boolean prefetch,
                            int networksPerQuestion) {
    /** The smallest ring of answers: a loop's share of {@code max-bytes} is never less. */
    public static final long MIN_RING = 1 << 16;
    /** Bytes of the index a kept answer takes: its slot's hash and word. */
    public static final int INDEX_BYTES = 16;
    /**
     * Bytes of the index's doorkeeper an answer takes (two generations, 16 bits each), from
     * {@link #MIN_DOORKEEPER} up to {@link #MAX_DOORKEEPER}: {@code RecentHashes}' bounds, which
     * {@code AnswerTableTest} holds these to.
     */
    public static final int DOORKEEPER_BYTES = 4;
    public static final long MIN_DOORKEEPER = 256;
    public static final long MAX_DOORKEEPER = 32L << 20;

    public boolean on() {
        return size > 0;
    }

    /** Bytes of each of {@code loops} rings of answers: an equal share of {@code maxBytes}, {@link #MIN_RING} at least. */
    public long ringBytes(int loops) {
        return Math.max(MIN_RING, maxBytes / loops);
    }

    /** Bytes of the index of answers (four-slot buckets, an {@code AnswerTable}'s) and its doorkeeper, taken at start. */
    public long indexBytes() {
        long slots = (size + 3) / 4 * 4L;
        return INDEX_BYTES * slots + Math.min(Math.max(MIN_DOORKEEPER, DOORKEEPER_BYTES * slots), MAX_DOORKEEPER);
    }
}
