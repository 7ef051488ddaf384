package io.sluice.config;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Where the limiter's counters live. Documented key by key in {@code conf/sluice.yml}.
 *
 * @param kind           memory, redis or chronicle
 * @param redis          a standalone Redis, {@code redis://host:port[/db]} or {@code rediss://...}
 * @param redisCluster   seed nodes of a Redis Cluster; when not empty, used instead of {@code redis}
 * @param redisMode      exact (every decision asks Redis) or async (decide locally, sync deltas)
 * @param redisTimeout   the longest a query waits on Redis before the failure policy decides it
 * @param redisFailure   what decides while Redis is slow or away
 * @param syncInterval   async mode: how often deltas are pushed and totals read back
 * @param stateFile      the Chronicle Map file
 * @param resetCorruptStateFile move a state file that cannot be read aside and start a fresh one,
 *                       instead of refusing to start
 */
public record BackendSettings(
        Kind kind,
        URI redis,
        List<String> redisCluster,
        RedisMode redisMode,
        Duration redisTimeout,
        RedisFailure redisFailure,
        Duration syncInterval,
        Path stateFile,
        boolean resetCorruptStateFile) {

    public BackendSettings {
        redisCluster = List.copyOf(redisCluster);
    }

    public boolean cluster() {
        return !redisCluster.isEmpty();
    }

    /** Where the counters live; each prints as its configuration name. */
    public enum Kind {
        MEMORY, REDIS, CHRONICLE;

        @Override
        public String toString() {
            return Values.configName(this);
        }
    }

    /** How decisions use Redis; each prints as its configuration name. */
    public enum RedisMode {
        EXACT, ASYNC;

        @Override
        public String toString() {
            return Values.configName(this);
        }
    }

    /** What decides while Redis is slow or away; each prints as its configuration name. */
    public enum RedisFailure {
        /** The in-process counters, as with the memory backend. */
        LOCAL,
        /** Everything is allowed. */
        OPEN,
        /** Everything limited is refused. */
        CLOSED;

        @Override
        public String toString() {
            return Values.configName(this);
        }
    }
}
