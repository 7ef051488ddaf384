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
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
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
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Lettuce connection to a standalone Redis or a Redis Cluster, shared by every event loop:
 * Lettuce pipelines what they send on it, and with epoll its channel is on one of sluice's own
 * loops ({@link SharedLoops}), so that loop's calls and every reply cost no thread hand-off. Runs
 * the scripts by EVALSHA (EVAL once when a server answers NOSCRIPT, which also loads it).
 *
 * <p>Knows which servers answer ({@link RedisNode}): the standalone Redis, or each cluster master.
 * A call that fails or is late puts its server away at once, and while it is away no call goes to
 * it: {@link #run} fails at once, and the domains it holds are decided by the failure policy. Every
 * {@value #PROBE_MILLIS} ms while a server is away, a background thread asks a cluster for its
 * topology again (a replica promoted in a dead master's place is a new server, called at once) and
 * sends each server still away a PING; one that answers is called again.
 *
 * <p>Nothing here blocks a caller: calls that cannot be sent fail at once (the connection rejects
 * commands while disconnected) and calls that get no answer fail after the timeout; Lettuce
 * reconnects by itself. If Redis is not there at start, the background thread keeps trying.
 */
public final class RedisLink implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RedisLink.class);
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(1);
    private static final long RETRY_MILLIS = 1000;
    /** How often servers that are away are probed. */
    static final long PROBE_MILLIS = 250;
    /**
     * How long a probe waits for a topology (a refresh's own timeout; a node that does not answer
     * is left out of it) and for its PINGs, which Lettuce also ends at the Redis timeout.
     */
    private static final long PROBE_WAIT_MILLIS = 1000;

    private final BackendSettings settings;
    private final String target;
    private final ClientResources resources;
    private final AbstractRedisClient client;
    /** Connects when Redis was not there at start, and probes servers that are away. */
    private final ScheduledExecutorService background = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sluice-redis");
        t.setDaemon(true);
        return t;
    });
    private volatile StatefulConnection<String, String> connection;
    private volatile RedisScriptingAsyncCommands<String, String> commands;
    /** The standalone Redis; null for a cluster. */
    private final RedisNode standalone;
    /** A cluster's masters by node id, each made when a key first maps to it; dropped when it holds no slot. */
    private final Map<String, RedisNode> masters = new ConcurrentHashMap<>();
    /** Servers away now. */
    private final AtomicInteger away = new AtomicInteger();
    private volatile boolean closing;

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
                RedisURI seed = RedisURI.create("redis://" + s);
                seed.setTimeout(Duration.ofMillis(PROBE_WAIT_MILLIS)); // a topology refresh's: a frozen node is left out
                seeds.add(seed);
            }
            RedisClusterClient c = RedisClusterClient.create(resources, seeds);
            // Node connections are opened lazily and topology refreshes come and go: commands wait
            // for a connection (bounded by the timeout), and calls say which masters answer.
            // Redirects and reconnects ask for the topology again, besides the probes.
            c.setOptions(ClusterClientOptions.builder().socketOptions(socket).timeoutOptions(timeouts)
                    .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder().enableAllAdaptiveRefreshTriggers().build())
                    .build());
            this.client = c;
            this.target = "redis cluster " + String.join(",", settings.redisCluster());
            this.standalone = null;
        } else {
            RedisClient c = RedisClient.create(resources, RedisURI.create(settings.redis().toString()));
            c.setOptions(ClientOptions.builder().socketOptions(socket).timeoutOptions(timeouts)
                    .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS).build());
            this.client = c;
            this.target = "redis " + settings.redis();
            this.standalone = new RedisNode(target, policy(), this::countAway);
            c.addListener(connectionWatch());
        }
    }

    private String policy() {
        return settings.redisFailure().toString();
    }

    private RedisConnectionStateListener connectionWatch() {
        return new RedisConnectionStateListener() {
            @Override
            public void onRedisConnected(RedisChannelHandler<?, ?> h, java.net.SocketAddress a) {
                if (connection != null) {
                    standalone.answered();
                }
            }

            @Override
            public void onRedisDisconnected(RedisChannelHandler<?, ?> h) {
                if (!closing) {
                    standalone.failed("connection lost");
                }
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
        if (!link.connect(true)) {
            link.background.schedule(link::connectLater, RETRY_MILLIS, TimeUnit.MILLISECONDS);
        }
        link.background.scheduleWithFixedDelay(link::probe, PROBE_MILLIS, PROBE_MILLIS, TimeUnit.MILLISECONDS);
        return link;
    }

    private void connectLater() {
        if (!closing && !connect(false)) {
            background.schedule(this::connectLater, RETRY_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** Not under a lock: Lettuce's thread marks the standalone Redis back while this waits on it. */
    private boolean connect(boolean first) {
        try {
            if (client instanceof RedisClusterClient c) {
                var conn = c.connect();
                commands = conn.async();
                connection = conn;
            } else {
                var conn = ((RedisClient) client).connect();
                commands = conn.async();
                connection = conn;
                standalone.answered();
            }
            if (!first) {
                log.info("{} is reachable: counters are shared", target);
            }
            return true;
        } catch (RuntimeException e) {
            if (first) {
                log.warn("{} is not reachable ({}): deciding with --redis-failure {} until it is", target,
                        e.getMessage(), policy());
            }
            return false;
        }
    }

    /** Whether every server answers: connected, and none away. */
    public boolean up() {
        return connection != null && away.get() == 0;
    }

    /**
     * Whether calls may go at all: connected, and a standalone Redis not away. In a cluster,
     * whether the server of a given key is away is {@link #away(String)}'s.
     */
    boolean callable() {
        return connection != null && (standalone == null || !standalone.away());
    }

    /** Whether the server holding {@code key} is away: its calls fail at once, and the failure policy decides. */
    boolean away(String key) {
        RedisNode n = nodeOf(key);
        return n != null && n.away();
    }

    /** The server holding {@code key}; null while a cluster's topology is unknown. */
    private RedisNode nodeOf(String key) {
        if (standalone != null) {
            return standalone;
        }
        if (!(connection instanceof StatefulRedisClusterConnection<String, String> c)) {
            return null;
        }
        RedisClusterNode m = c.getPartitions().getMasterBySlot(SlotHash.getSlot(key));
        if (m == null) {
            return null;
        }
        RedisNode n = masters.get(m.getNodeId());
        return n != null ? n : masters.computeIfAbsent(m.getNodeId(), id -> new RedisNode(
                "redis cluster node " + m.getUri().getHost() + ":" + m.getUri().getPort(), policy(), this::countAway));
    }

    /**
     * Under the link's lock: two nodes changing at once on two threads each count all nodes, and
     * the later count, which sees both changes, is the one kept.
     */
    private synchronized void countAway() {
        int n = standalone != null && standalone.away() ? 1 : 0;
        for (RedisNode m : masters.values()) {
            n += m.away() ? 1 : 0;
        }
        away.set(n);
    }

    /** Servers away now, for the metrics. */
    int serversAway() {
        return away.get();
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
     * Runs {@code script} on the server holding {@code keys}. The future completes on a Lettuce
     * thread, exceptionally when that server is away (at once) or later than the timeout.
     */
    public CompletableFuture<List<Object>> run(Script script, String[] keys, String[] args) {
        RedisScriptingAsyncCommands<String, String> c = commands;
        if (c == null) {
            return CompletableFuture.failedFuture(new IllegalStateException("not connected"));
        }
        RedisNode node = nodeOf(keys[0]);
        if (node != null && node.away()) {
            return CompletableFuture.failedFuture(new IllegalStateException(node.name + " is away"));
        }
        CompletableFuture<List<Object>> first;
        try {
            first = c.<List<Object>>evalsha(script.sha1(), ScriptOutputType.MULTI, keys, args).toCompletableFuture();
        } catch (RuntimeException e) { // a command the client refuses outright
            failed(node, e);
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
            if (e != null) {
                failed(node, e);
            } else if (node != null) {
                node.answered();
            }
        });
    }

    private void failed(RedisNode node, Throwable e) {
        if (node != null && !closing) {
            node.failed(unwrap(e).toString());
        }
    }

    private static Throwable unwrap(Throwable e) {
        return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    }

    /**
     * While a server is away: each sent a PING (all at once; one that answers is back), and a
     * cluster's topology asked again meanwhile, then masters that hold no slot any more forgotten.
     * The count of servers away is made again each time, whatever it said. On the background
     * thread, which waits here for at most {@link #PROBE_WAIT_MILLIS}; an exception would end the
     * schedule, so none leaves.
     */
    private void probe() {
        try {
            probeOnce();
        } catch (RuntimeException e) {
            log.debug("probing Redis", e); // the next probe tries again
        }
    }

    private void probeOnce() {
        StatefulConnection<String, String> c = connection;
        countAway();
        if (c == null || away.get() == 0 || closing) {
            return;
        }
        List<CompletableFuture<?>> asked = new ArrayList<>();
        if (c instanceof StatefulRedisClusterConnection<String, String> cluster) {
            for (Map.Entry<String, RedisNode> m : masters.entrySet()) {
                if (m.getValue().away()) {
                    asked.add(ping(() -> cluster.getConnectionAsync(m.getKey()), m.getValue()));
                }
            }
            asked.add(quietly(() -> ((RedisClusterClient) client).refreshPartitionsAsync().toCompletableFuture()));
        } else if (standalone.away() && c instanceof StatefulRedisConnection<String, String> single) {
            asked.add(ping(() -> CompletableFuture.completedFuture(single), standalone));
        }
        try {
            CompletableFuture.allOf(asked.toArray(new CompletableFuture<?>[0])).get(PROBE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            // what did not answer in time stays away
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (c instanceof StatefulRedisClusterConnection<String, String> cluster) {
            Set<String> holding = cluster.getPartitions().stream().filter(n -> !n.getSlots().isEmpty())
                    .map(RedisClusterNode::getNodeId).collect(Collectors.toSet());
            masters.keySet().retainAll(holding);
        }
        countAway();
    }

    /** Once {@code connecting} gives a connection, PINGs {@code node} on it: back if it answers. */
    private static CompletableFuture<?> ping(Supplier<CompletableFuture<? extends StatefulRedisConnection<?, ?>>> connecting,
                                             RedisNode node) {
        return quietly(() -> connecting.get().thenCompose(n -> n.async().ping().toCompletableFuture())
                .thenRun(node::answered));
    }

    /** What {@code started} starts, completing normally whatever happens to it (or if starting it throws). */
    private static CompletableFuture<?> quietly(Supplier<CompletableFuture<?>> started) {
        try {
            return started.get().handle((r, e) -> null);
        } catch (RuntimeException e) {
            return CompletableFuture.completedFuture(null);
        }
    }

    public String describe() {
        return target + (connection != null ? "" : " (not reachable yet)");
    }

    @Override
    public void close() {
        closing = true;
        background.shutdownNow();
        StatefulConnection<String, String> c = connection;
        if (c != null) {
            c.close();
        }
        client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
        resources.shutdown(0, 1, TimeUnit.SECONDS);
    }
}
