package io.sluice.backend.redis;

import io.sluice.domain.DomainKey;
import io.sluice.limit.Algorithm;
import io.sluice.limit.Policy;

/**
 * Where a domain's word lives in Redis: {@code sluice:{example.com}:fixed-window:1000ms}. The hash
 * tag keeps the key in the domain's cluster slot; the algorithm and the window length in the name
 * keep instances that count differently from reading each other's words as their own.
 */
final class RedisKeys {
    private RedisKeys() {
    }

    /** The key of {@code domain}'s word, whose policy is {@code p}. */
    static String key(DomainKey domain, Policy p, String algorithm) {
        return "sluice:{" + domain.name() + "}:" + algorithm + ":" + p.windowNanos() / 1_000_000 + "ms";
    }

    /** A key lives as long as its word changes a decision (at least a millisecond). */
    static String ttlMillis(Algorithm algorithm, long word, Policy p, long now) {
        return Long.toString(Math.max(1, (algorithm.idleIn(word, p, now) + 999_999) / 1_000_000));
    }

    /** A word as the compare-and-set script returns it (which turns what is not a word into "0"). */
    static long word(Object reply) {
        try {
            long w = Long.parseLong(reply.toString());
            return Algorithm.isWord(w) ? w : 0; // another writer's would break the limiter's invariants
        } catch (NumberFormatException e) {
            return 0; // the script sends only words; were another to, none is what it would be
        }
    }

    /**
     * The compare-and-set's four arguments for one domain at {@code at}: the word expected, whether
     * it is idle (then an expired key matches it too), the next word and its ttl.
     */
    static void casArguments(String[] args, int at, Algorithm algorithm, Policy p, long expected, long next,
                             long now) {
        args[at] = Long.toString(expected);
        args[at + 1] = algorithm.idle(expected, p, now) ? "1" : "0";
        args[at + 2] = Long.toString(next);
        args[at + 3] = ttlMillis(algorithm, next, p, now);
    }
}
