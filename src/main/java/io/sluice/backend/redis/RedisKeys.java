package io.sluice.backend.redis;

import io.sluice.limit.Algorithm;
import io.sluice.limit.Counter;

/**
 * Where a domain's word lives in Redis: {@code sluice:{example.com}:fixed-window:1000ms}. The hash
 * tag keeps the key in the domain's cluster slot; the algorithm and the window length in the name
 * keep instances that count differently from reading each other's words as their own.
 */
final class RedisKeys {
    private RedisKeys() {
    }

    static String key(Counter c, String algorithm) {
        return "sluice:{" + c.cachedName() + "}:" + algorithm + ":" + c.policy().windowNanos() / 1_000_000 + "ms";
    }

    /** A key lives as long as its word changes a decision (at least a millisecond). */
    static String ttlMillis(Algorithm algorithm, long word, Counter c, long now) {
        return Long.toString(Math.max(1, (algorithm.idleIn(word, c.policy(), now) + 999_999) / 1_000_000));
    }

    /** A word as the compare-and-set script returns it. */
    static long word(Object reply) {
        return Long.parseLong(reply.toString());
    }
}
