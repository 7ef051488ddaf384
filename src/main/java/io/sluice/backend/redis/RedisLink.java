package io.sluice.backend.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.lettuce.core.resource.Transports;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.EpollSocketChannel;
import io.sluice.config.BackendSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.ToIntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Lettuce connection to a standalone Redis or a Redis Cluster, shared by every event loop:
 * Lettuce pipelines what they send on it, and with epoll its channel is on one of sluice's own
 * loops ({@link SharedLoops}), so that loop's calls and every reply cost no thread hand-off. Runs the scripts by EVALSHA (EVAL once when a server
 * answers NOSCRIPT, which also loads it), and knows whether Redis is there: one log line when it
 * goes away (a lost connection, or three failed calls in a row) and one when it is back.
 *
 * <p>Nothing here blocks a caller: calls that cannot be sent fail at once (the connection rejects
 * commands while disconnected) and calls that get no answer fail after the timeout; Lettuce
 * reconnects by itself. If Redis is not there at start, a background thread keeps trying.
 */
public final class RedisLink implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RedisLink.class);
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(1);
    private static final long RETRY_MILLIS = 1000;
    private static final int FAILURES_TO_GO_AWAY = 3;
    private static final long LINE_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final BackendSettings settings;
    private final String target;
    private final ClientResources resources;
    private final AbstractRedisClient client;
    private final ScheduledExecutorService connector = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sluice-redis-connect");
        t.setDaemon(true);
        return t;
    });
    private volatile StatefulConnection<String, String> connection;
    private volatile RedisScriptingAsyncCommands<String, String> commands;
    private volatile boolean up;
    /** Whether the away line was written since start: the back line only follows one. */
    private boolean downSaid;
    private volatile boolean closing;
    /** Calls failed since the last success; plain and racy, read only to decide when to go away. */
    private int failuresInARow;
    /** Lines are at most one of each kind per interval, however Redis flaps. */
    private long lastAwayLine = System.nanoTime() - LINE_INTERVAL_NANOS;
    private long lastBackLine = System.nanoTime() - LINE_INTERVAL_NANOS;
    private int flaps;

    private RedisLink(BackendSettings settings, EventLoopGroup loops, int loopCount) {
        this.settings = settings;
        DefaultClientResources.Builder made = DefaultClientResources.builder().computationThreadPoolSize(1)
                .reconnectDelay(Delay.exponential(Duration.ofMillis(100), Duration.ofSeconds(1), 2, TimeUnit.MILLISECONDS));
        // Lettuce picks its channel class by itself: sluice's loops serve it only when that is epoll's.
        if (loops != null && Transports.socketChannelClass() == EpollSocketChannel.class) {
            made.eventLoopGroupProvider(new SharedLoops(loops, loopCount));
        } else {
            made.ioThreadPoolSize(2); // Redis work is light: Lettuce's smallest pool
        }
        this.resources = made.build();
        SocketOptions socket = SocketOptions.builder().connectTimeout(CONNECT_TIMEOUT).build();
        TimeoutOptions timeouts = TimeoutOptions.enabled(settings.redisTimeout());
        if (settings.cluster()) {
            List<RedisURI> seeds = new ArrayList<>();
            for (String s : settings.redisCluster()) {
                seeds.add(RedisURI.create("redis://" + s));
            }
            RedisClusterClient c = RedisClusterClient.create(resources, seeds);
            // Node connections are opened lazily and topology refreshes come and go: commands wait
            // for a connection (bounded by the timeout), and only calls say whether Redis is there.
            c.setOptions(ClusterClientOptions.builder().socketOptions(socket).timeoutOptions(timeouts).build());
            this.client = c;
            this.target = "redis cluster " + String.join(",", settings.redisCluster());
        } else {
            RedisClient c = RedisClient.create(resources, RedisURI.create(settings.redis().toString()));
            c.setOptions(ClientOptions.builder().socketOptions(socket).timeoutOptions(timeouts)
                    .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS).build());
            c.addListener(connectionWatch());
            this.client = c;
            this.target = "redis " + settings.redis();
        }
    }

    private RedisConnectionStateListener connectionWatch() {
        return new RedisConnectionStateListener() {
            @Override
            public void onRedisConnected(RedisChannelHandler<?, ?> h, java.net.SocketAddress a) {
                if (connection != null) {
                    markUp();
                }
            }

            @Override
            public void onRedisDisconnected(RedisChannelHandler<?, ?> h) {
                markDown("connection lost");
            }
        };
    }

    /**
     * Connects now if Redis is there, else keeps trying in the background; never throws for an
     * absent Redis. Never on an event loop: connecting blocks.
     *
     * @param loops sluice's epoll event loops, for Lettuce's connections ({@link SharedLoops}), or
     *              null for threads of Lettuce's own
     */
    public static RedisLink open(BackendSettings settings, EventLoopGroup loops, int loopCount) {
        RedisLink link = new RedisLink(settings, loops, loopCount);
        if (!link.connect()) {
            link.connector.scheduleWithFixedDelay(() -> {
                if (link.connection == null && link.connect()) {
                    link.connector.shutdown();
                }
            }, RETRY_MILLIS, RETRY_MILLIS, TimeUnit.MILLISECONDS);
        }
        return link;
    }

    /** Not under the link's lock: Lettuce's thread marks the link up while this waits on it. */
    private boolean connect() {
        try {
            if (client instanceof RedisClusterClient c) {
                var conn = c.connect();
                commands = conn.async();
                connection = conn;
            } else {
                var conn = ((RedisClient) client).connect();
                commands = conn.async();
                connection = conn;
            }
            markUp();
            return true;
        } catch (RuntimeException e) {
            markDown(e.getMessage());
            return false;
        }
    }

    /** Whether the last call (or the connection) says Redis is there. */
    public boolean up() {
        return up;
    }

    /** The cluster slot of {@code key}; 0 for a standalone Redis, where every key may share a call. */
    public int slot(String key) {
        return settings.cluster() ? SlotHash.getSlot(key) : 0;
    }

    /** Domains per script call: bounds the time one call holds Redis. */
    static final int MAX_DOMAINS_PER_CALL = 256;

    /**
     * {@code items} grouped into script calls: one group per cluster slot (a script's keys must
     * share one), each at most {@link #MAX_DOMAINS_PER_CALL} long.
     */
    <T> List<List<T>> calls(Collection<T> items, ToIntFunction<T> slotOf) {
        Map<Integer, List<T>> bySlot = new HashMap<>();
        for (T item : items) {
            bySlot.computeIfAbsent(slotOf.applyAsInt(item), s -> new ArrayList<>()).add(item);
        }
        List<List<T>> calls = new ArrayList<>();
        for (List<T> group : bySlot.values()) {
            for (int from = 0; from < group.size(); from += MAX_DOMAINS_PER_CALL) {
                calls.add(group.subList(from, Math.min(group.size(), from + MAX_DOMAINS_PER_CALL)));
            }
        }
        return calls;
    }

    /**
     * Runs {@code script}. The future completes on a Lettuce thread, exceptionally when Redis is
     * away or later than the timeout.
     */
    public CompletableFuture<List<Object>> run(Script script, String[] keys, String[] args) {
        RedisScriptingAsyncCommands<String, String> c = commands;
        if (c == null) {
            return CompletableFuture.failedFuture(new IllegalStateException("not connected"));
        }
        CompletableFuture<List<Object>> first;
        try {
            first = c.<List<Object>>evalsha(script.sha1(), ScriptOutputType.MULTI, keys, args).toCompletableFuture();
        } catch (RuntimeException e) { // a command the client refuses outright
            callFailed(e.toString());
            return CompletableFuture.failedFuture(e);
        }
        return first.handle((r, e) -> {
            if (e == null) {
                return CompletableFuture.completedFuture(r);
            }
            if (unwrap(e) instanceof RedisNoScriptException) {
                return c.<List<Object>>eval(script.text(), ScriptOutputType.MULTI, keys, args).toCompletableFuture();
            }
            return CompletableFuture.<List<Object>>failedFuture(unwrap(e));
        }).thenCompose(f -> f).whenComplete((r, e) -> {
            if (e == null) {
                markUp();
            } else {
                callFailed(unwrap(e).toString());
            }
        });
    }

    private static Throwable unwrap(Throwable e) {
        return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    }

    private void markUp() {
        if (failuresInARow != 0) {
            failuresInARow = 0; // racy by design: a hint for when to give up, not a count
        }
        if (!up) { // every successful call passes here: no lock unless the state changes
            markUpSlow();
        }
    }

    private synchronized void markUpSlow() {
        if (!up) {
            up = true;
            if (downSaid) {
                long now = System.nanoTime();
                if (now - lastBackLine >= LINE_INTERVAL_NANOS) {
                    lastBackLine = now;
                    log.info("{} is back: counters are shared again{}", target, flaps > 0
                            ? " (it went away and came back " + flaps + " more times since the last line)" : "");
                    flaps = 0;
                } else {
                    flaps++;
                }
            }
        }
    }

    /** A failed call: Redis counts as away after a few in a row (one late call is not an outage). */
    private void callFailed(String why) {
        if (++failuresInARow >= FAILURES_TO_GO_AWAY) {
            markDown(why);
        }
    }

    /** Redis is away: queries are decided by the failure policy without calling it. */
    private synchronized void markDown(String why) {
        if (closing) {
            return;
        }
        if (up || !downSaid) {
            up = false;
            downSaid = true;
            long now = System.nanoTime();
            if (now - lastAwayLine >= LINE_INTERVAL_NANOS) {
                lastAwayLine = now;
                log.warn("{} is away ({}): deciding with --redis-failure {} until it is back", target, why,
                        settings.redisFailure());
            }
        }
    }

    public String describe() {
        return target + (up ? "" : " (not reachable yet)");
    }

    @Override
    public void close() {
        closing = true;
        connector.shutdownNow();
        StatefulConnection<String, String> c = connection;
        if (c != null) {
            c.close();
        }
        client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
        resources.shutdown(0, 1, TimeUnit.SECONDS);
    }
}
