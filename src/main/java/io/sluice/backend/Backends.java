package io.sluice.backend;

import io.netty.channel.EventLoopGroup;
import io.sluice.backend.chronicle.ChronicleCounters;
import io.sluice.backend.redis.RedisBackend;
import io.sluice.config.BackendSettings;
import io.sluice.config.ConfigException;
import io.sluice.config.Settings;
import io.sluice.domain.DomainKey;
import io.sluice.limit.Backend;
import io.sluice.limit.CounterStore;
import io.sluice.limit.Decisions;
import io.sluice.limit.DomainLimiter;
import io.sluice.limit.HeapCounters;
import io.sluice.limit.Policy;
import io.sluice.metrics.Registry;
import io.sluice.pipeline.InternalErrors;
import java.util.function.Function;

/**
 * Where the limiter's counters live (memory, Chronicle Map, Redis), and the one place that names
 * the backends: the store the limiter keeps its words in ({@link #counters}), and what runs
 * beside it to make each event loop's decisions ({@link #start}).
 */
public final class Backends {
    private Backends() {
    }

    /** The limiter's store, opened once the limiter's policies can be asked for. */
    public static CounterStore counters(Settings settings, Function<DomainKey, Policy> policies) throws ConfigException {
        BackendSettings b = settings.backend();
        return switch (b.kind()) {
            case MEMORY -> new HeapCounters();
            case REDIS -> RedisBackend.counters(b);
            case CHRONICLE -> {
                // Chronicle reports usage over the network unless told not to before its first class loads.
                System.setProperty("chronicle.analytics.disable", "true");
                yield ChronicleCounters.open(b.stateFile(), settings.limits().maxDomains(), b.resetCorruptStateFile(),
                        policies);
            }
        };
    }

    /**
     * Starts the backend for {@code limiter}, whose store {@link #counters} opened.
     *
     * @param loops  sluice's event loops when they are epoll's, which a client of the backend may
     *               share; else null
     * @param errors where a bug met off the query path's stages (a verdict, a sync pass) is counted
     */
    public static Backend start(Settings settings, DomainLimiter limiter, Registry meters, EventLoopGroup loops,
                         InternalErrors errors) {
        return switch (settings.backend().kind()) {
            case MEMORY, CHRONICLE -> new Backend.Local(Decisions.local(limiter)); // the counters decide
            case REDIS -> RedisBackend.start(settings.backend(), settings.limits().algorithm(), limiter, meters, loops,
                    settings.threads(), errors);
        };
    }

}
