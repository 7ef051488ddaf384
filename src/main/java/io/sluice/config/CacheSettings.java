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
 */
public record CacheSettings(int size, long maxBytes, Duration maxTtl, Duration maxNegativeTtl, Duration servfailTtl,
                            Duration staleTtl, Duration staleRefreshTime, boolean staleWhenLimited) {
    public boolean on() {
        return size > 0;
    }
}
