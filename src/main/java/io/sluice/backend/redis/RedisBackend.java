package io.sluice.backend.redis;

import io.netty.channel.EventLoopGroup;
import io.sluice.limit.Backend;
import io.sluice.config.BackendSettings;
import io.sluice.config.LimitSettings;
import io.sluice.domain.DomainKey;
import io.sluice.domain.DomainProbe;
import io.sluice.limit.CounterStore;
import io.sluice.limit.Decisions;
import io.sluice.limit.DomainLimiter;
import io.sluice.limit.HeapCounters;
import io.sluice.metrics.LatencyHistogram;
import io.sluice.metrics.Registry;
import io.sluice.pipeline.InternalErrors;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counters shared through Redis by every sluice pointed at it, as the limit stage's
 * {@link Decisions}. Redis keeps each domain's word of the limiter's algorithm, set only by
 * compare-and-set ({@code cas.lua}), so every algorithm is shared the same way. In exact mode each
 * decision is a compare-and-set in Redis ({@link ExactDecisions}, one per event loop); in async
 * mode the in-process limiter decides and {@link DeltaSync} keeps it in step with the fleet. While
 * Redis is away or slow, the failure policy decides: the in-process limiter ({@code local}),
 * everything allowed ({@code open}) or everything counted refused ({@code closed}).
 */
public final class RedisBackend implements Backend {
    private final BackendSettings settings;
    private final DomainLimiter limiter;
    private final String algorithmName;
    private final RedisLink link;
    private final Script cas = Script.load("cas.lua");
    private final DeltaSync sync;
    private final LongAdder conflicts;
    /**
     * Per counter slot, the calls out (of any loop) that reserved in its word: until they settle
     * the word may hold what Redis has not taken, so it refuses nothing by itself. Calls settle
     * within the Redis timeout, long before a slot can be given to another domain.
     */
    private final AtomicIntegerArray reservations;
    /** Exact mode's, shared by the loops; null in async mode. */
    private final Leases leases;
    private final LongAdder leased;
    private final LongAdder failureDecisions;
    private final LatencyHistogram waits;
    private final InternalErrors errors;

    private RedisBackend(BackendSettings settings, LimitSettings.Algorithm algorithm, DomainLimiter limiter,
                         Registry meters, EventLoopGroup loops, int loopCount, InternalErrors errors) {
        this.settings = settings;
        this.errors = errors;
        this.conflicts = meters.counter("redis_conflicts", "Compare-and-sets of a domain's word in Redis that another"
                + " writer (another instance, another loop) got to first: each is worked out again and retried, until"
                + " the Redis timeout.");
        meters.gauge("redis_up", "1 while Redis answers (in a cluster, every master), else 0.", () -> up() ? 1 : 0);
        this.failureDecisions = meters.counter("redis_failure_decisions", "Queries --redis-failure decided: Redis"
                + " (in exact mode, the cluster master of their domain) away, a call past --redis-timeout, a domain's"
                + " compare-and-sets lost until then, or too many queries parked for calls.");
        this.waits = meters.histogram("redis_wait", "Exact mode: how long the queries of one domain parked in one"
                + " read burst waited for their verdicts, from the first one parked. At most --redis-timeout"
                + " (and the event loop's delay), whatever Redis does.");
        this.limiter = limiter;
        this.algorithmName = algorithm.toString();
        this.link = RedisLink.open(settings, loops, loopCount);
        meters.gauge("redis_servers_away", "Redis servers (the standalone Redis, or cluster masters) that a call"
                + " found failing or late and no probe has found answering since: their domains are decided by"
                + " --redis-failure without a call.", link::serversAway);
        this.reservations = new AtomicIntegerArray(limiter.table().capacity() + 1);
        this.leases = settings.redisMode() == BackendSettings.RedisMode.EXACT
                ? new Leases(limiter.table().capacity() + 1) : null;
        this.leased = meters.counter("redis_leased", "Queries exact mode allowed from a lease, a share of a budget far"
                + " from spent that a call reserved in Redis beforehand: without a call of their own.");
        LongAdder passes = meters.counter("redis_sync_passes", "Async mode's sync passes done (each takes the"
                + " loops' counts and pushes what is due); one that stops growing is a sync thread stuck.");
        this.sync = limiter.store() instanceof SyncedCounters synced
                ? new DeltaSync(this, limiter, synced, settings.syncInterval(), errors, passes) : null;
    }

    /**
     * Where the limiter keeps its words with this backend: in memory, where exact mode mirrors
     * Redis's words and async mode also counts what it has not synced.
     */
    public static CounterStore counters(BackendSettings settings) {
        return settings.redisMode() == BackendSettings.RedisMode.ASYNC ? new SyncedCounters() : new HeapCounters();
    }

    /**
     * Connects (or starts trying to) and, in async mode, starts syncing.
     *
     * @param limiter a limiter whose store is {@link #counters}'s
     * @param loops   sluice's epoll event loops, for Lettuce's connection, or null for threads of Lettuce's own
     */
    public static RedisBackend start(BackendSettings settings, LimitSettings.Algorithm algorithm,
                                     DomainLimiter limiter, Registry meters, EventLoopGroup loops, int loopCount,
                                     InternalErrors errors) {
        RedisBackend b = new RedisBackend(settings, algorithm, limiter, meters, loops, loopCount, errors);
        if (b.sync != null) {
            b.sync.start();
        }
        return b;
    }

    /**
     * The decisions of one event loop: Redis's own in exact mode; in async mode the loop's
     * counters, which {@link DeltaSync} keeps in step with the fleet. Either way, while Redis is
     * away the failure policy decides.
     */
    @Override
    public Decisions forLoop(ScheduledExecutorService loop, Decisions.Verdicts verdicts) {
        if (sync != null) {
            return (slot, domain, q) -> link.up()
                    ? (limiter.tryAcquire(slot, domain, q.now(), q.verified()) ? Decisions.ALLOWED : Decisions.REFUSED)
                    : failure(slot, domain, q.now(), q.verified());
        }
        return new ExactDecisions(loop, this, limiter, verdicts, errors);
    }

    /**
     * The decision while Redis cannot give one, for a query for {@code domain} at {@code now},
     * whose counter is {@code slot}, from a client that proved its address or not ({@code verified}).
     */
    int failure(int slot, DomainProbe domain, long now, boolean verified) {
        failureDecisions.increment();
        return switch (settings.redisFailure()) {
            case LOCAL -> limiter.tryAcquire(slot, domain, now, verified) ? Decisions.ALLOWED : Decisions.REFUSED;
            case OPEN -> Decisions.ALLOWED;
            case CLOSED -> Decisions.REFUSED;
        };
    }

    /**
     * The failure policy's decision for a query whose batch waited the Redis timeout with its call
     * still out, which reserved the query in this process's word ({@code reserved}) or not.
     */
    int failure(boolean reserved) {
        failureDecisions.increment();
        return switch (settings.redisFailure()) {
            case LOCAL -> reserved ? Decisions.ALLOWED : Decisions.REFUSED;
            case OPEN -> Decisions.ALLOWED;
            case CLOSED -> Decisions.REFUSED;
        };
    }

    LatencyHistogram waits() {
        return waits;
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

    /** The algorithm's name, part of each key. */
    String algorithmName() {
        return algorithmName;
    }

    Script casScript() {
        return cas;
    }

    LongAdder conflicts() {
        return conflicts;
    }

    /**
     * {@link #failure(int, DomainProbe, long, boolean)} of a query kept past its loop's probe (a
     * parked one): the domain is looked up again, since a query may wait longer than its slot lives.
     */
    int failure(DomainKey domain, boolean verified) {
        if (settings.redisFailure() != BackendSettings.RedisFailure.LOCAL) {
            return failure(DomainLimiter.NONE, null, 0, verified);
        }
        DomainProbe p = DomainProbe.of(domain);
        int slot = limiter.counterFor(p);
        if (slot == DomainLimiter.NONE) {
            failureDecisions.increment();
            return Decisions.ALLOWED; // its budget became unlimited meanwhile
        }
        return failure(slot, p, limiter.clock().epochNanos(), verified);
    }

    void reserved(int slot) {
        reservations.incrementAndGet(slot);
    }

    void settled(int slot) {
        reservations.decrementAndGet(slot);
    }

    Leases leases() {
        return leases;
    }

    LongAdder leased() {
        return leased;
    }

    /** Whether a call out has reserved in the word of {@code slot}. */
    boolean reserving(int slot) {
        return reservations.get(slot) > 0;
    }

    @Override
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
