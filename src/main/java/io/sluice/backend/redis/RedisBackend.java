package io.sluice.backend.redis;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.sluice.config.BackendSettings;
import io.sluice.config.LimitSettings;
import io.sluice.limit.Counter;
import io.sluice.limit.DomainLimiter;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Counters shared through Redis by every sluice pointed at it. In exact mode each decision is
 * Redis's ({@link ExactDecisions}, one per event loop); in async mode the in-process limiter
 * decides and {@link DeltaSync} keeps it in step with the fleet. While Redis is away or slow, the
 * failure policy decides: the in-process limiter ({@code local}), everything allowed ({@code open})
 * or everything counted refused ({@code closed}).
 */
public final class RedisBackend implements AutoCloseable {
    public static final int ALLOWED = 0;
    public static final int REFUSED = 1;
    /** Decided later, on the same loop, through {@link ExactDecisions.Verdicts}. */
    public static final int PARKED = 2;

    private final BackendSettings settings;
    private final DomainLimiter limiter;
    private final boolean sliding;
    private final RedisLink link;
    private final Script decide = Script.load("decide.lua");
    private final Script add = Script.load("add.lua");
    private final DeltaSync sync;
    /** Exact mode: each loop's decisions, for draining at stop. */
    private final Map<EventLoop, ExactDecisions> exact = new ConcurrentHashMap<>();

    private RedisBackend(BackendSettings settings, LimitSettings.Algorithm algorithm, DomainLimiter limiter) {
        this.settings = settings;
        this.limiter = limiter;
        this.sliding = algorithm == LimitSettings.Algorithm.SLIDING_WINDOW;
        this.link = RedisLink.open(settings);
        this.sync = settings.redisMode() == BackendSettings.RedisMode.ASYNC
                ? new DeltaSync(this, limiter, settings.syncInterval()) : null;
    }

    /** Connects (or starts trying to) and, in async mode, starts syncing. */
    public static RedisBackend start(BackendSettings settings, LimitSettings.Algorithm algorithm,
                                     DomainLimiter limiter) {
        RedisBackend b = new RedisBackend(settings, algorithm, limiter);
        if (b.sync != null) {
            b.sync.start();
        }
        return b;
    }

    /** The decisions of one event loop; null in async mode, where the loops decide alone. */
    public ExactDecisions exactDecisions(EventLoop loop, ExactDecisions.Verdicts verdicts) {
        if (sync != null) {
            return null;
        }
        ExactDecisions e = new ExactDecisions(loop, this, limiter, verdicts);
        exact.put(loop, e);
        return e;
    }

    /** Queries parked on {@code loop} waiting for Redis; call on that loop. */
    public int parked(EventLoop loop) {
        ExactDecisions e = exact.get(loop);
        return e == null ? 0 : e.parked();
    }

    /**
     * Decides a query for {@code c}'s domain: {@link #ALLOWED}, {@link #REFUSED}, or (exact mode)
     * {@link #PARKED}, with the copy of {@code message} kept and decided later.
     */
    public int decide(Counter c, ExactDecisions exact, ByteBuf message, Channel client, InetSocketAddress address) {
        if (!link.up()) {
            return failure(c);
        }
        if (exact == null) {
            return limiter.tryAcquire(c) ? ALLOWED : REFUSED;
        }
        return exact.decide(c, message, client, address);
    }

    /** The end of a read burst: exact mode sends what the loop parked. */
    public static void endOfBurst(ExactDecisions exact) {
        if (exact != null) {
            exact.send();
        }
    }

    /** The decision while Redis cannot give one. */
    int failure(Counter c) {
        return switch (settings.redisFailure()) {
            case LOCAL -> limiter.tryAcquire(c) ? ALLOWED : REFUSED;
            case OPEN -> ALLOWED;
            case CLOSED -> REFUSED;
        };
    }

    /** Whether Redis answers now, for the metrics. */
    public boolean up() {
        return link.up();
    }

    RedisLink link() {
        return link;
    }

    BackendSettings settings() {
        return settings;
    }

    boolean sliding() {
        return sliding;
    }

    Script decideScript() {
        return decide;
    }

    Script addScript() {
        return add;
    }

    /** For the startup line. */
    public String describe() {
        return "shared via " + link.describe() + ", mode " + settings.redisMode()
                + (sync != null ? " (sync every " + settings.syncInterval().toMillis() + " ms)" : "")
                + ", timeout " + settings.redisTimeout().toMillis() + " ms, on failure " + settings.redisFailure();
    }

    @Override
    public void close() {
        if (sync != null) {
            sync.close();
        }
        link.close();
    }
}
