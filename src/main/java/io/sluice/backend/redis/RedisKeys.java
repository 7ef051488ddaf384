package io.sluice.backend.redis;

import io.sluice.limit.Counter;

/**
 * The names of the counters in Redis: {@code sluice:{example.com}:<window index>}. The hash tag
 * keeps every key of a domain in one cluster slot, so one script call can read and write them
 * all; the window index (window length since the Unix epoch) makes instances agree on windows.
 */
final class RedisKeys {
    private RedisKeys() {
    }

    static String key(String domain, long window) {
        return "sluice:{" + domain + "}:" + window;
    }

    static long window(Counter c, long now) {
        return now / c.policy().windowNanos();
    }

    /** A key outlives its window by one window (two for the sliding window, which reads the last one). */
    static String ttlMillis(Counter c, boolean sliding) {
        long ms = Math.max(1, c.policy().windowNanos() / 1_000_000);
        return Long.toString(sliding ? 2 * ms : ms);
    }
}
