package io.sluice.backend.redis;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.sluice.limit.Counter;
import io.sluice.limit.DomainLimiter;
import io.sluice.limit.SharedCounter;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;

/**
 * Redis exact mode for one event loop. A query for a counted domain is parked (a copy of it) until
 * the end of the read burst, or while two rounds of calls are already out, until one returns; then
 * one script call per cluster slot (one in all on a standalone Redis) asks for every parked domain
 * at once, each as one increment by its number of queries, and the reply, run back on the loop,
 * says how many of each domain's queries are allowed. A fixed-window domain found over its budget
 * is refused here, without a call, until its window ends.
 *
 * <p>Only the loop's thread touches this object; the Redis reply is handed back to it with
 * {@link EventLoop#execute}. A query waits at most the Redis timeout: a failed or late call is
 * decided by the failure policy.
 */
public final class ExactDecisions {
    /** Parked queries of one loop at once; past this, the failure policy decides at once. */
    private static final int MAX_PARKED = 65_536;
    /** Domains per script call: bounds the time one call holds Redis. */
    private static final int MAX_DOMAINS_PER_CALL = 256;
    /**
     * Rounds of calls a loop has in flight at once. While they are out, new queries wait for the
     * next round, so under load each round carries more domains and each query costs fewer calls
     * and thread wake-ups; when idle a query goes at the end of its own burst.
     */
    private static final int MAX_ROUNDS_IN_FLIGHT = 2;

    /** What the handler does with a decided query; called on the loop. */
    public interface Verdicts {
        void allow(ParkedQuery q);

        void refuse(ParkedQuery q, Counter over);
    }

    /** A copy of a query waiting for Redis, and where its answer goes. */
    public record ParkedQuery(ByteBuf message, Channel client, InetSocketAddress address) {
    }

    /** One domain's queries parked in this burst. */
    private static final class Batch {
        final Counter counter;
        final List<ParkedQuery> queries = new ArrayList<>(4);
        long window;
        String key;

        Batch(Counter counter) {
            this.counter = counter;
        }
    }

    private final EventLoop loop;
    private final RedisBackend backend;
    private final DomainLimiter limiter;
    private final Verdicts verdicts;
    private final boolean sliding;
    private Map<Counter, Batch> waiting = new HashMap<>();
    private int parked;
    private int roundsInFlight;

    ExactDecisions(EventLoop loop, RedisBackend backend, DomainLimiter limiter, Verdicts verdicts) {
        this.loop = loop;
        this.backend = backend;
        this.limiter = limiter;
        this.verdicts = verdicts;
        this.sliding = backend.sliding();
    }

    /**
     * Decides now when it can ({@link RedisBackend#ALLOWED}, {@link RedisBackend#REFUSED}), else
     * parks a copy of {@code message} and returns {@link RedisBackend#PARKED}.
     */
    int decide(Counter c, ByteBuf message, Channel client, InetSocketAddress address) {
        long now = limiter.clock().epochNanos();
        if (!sliding && ((SharedCounter) c).overInWindow == (int) RedisKeys.window(c, now)) {
            limiter.noteRefusal(c);
            return RedisBackend.REFUSED;
        }
        if (parked >= MAX_PARKED) {
            return backend.failure(c);
        }
        Batch b = waiting.get(c);
        if (b == null) {
            b = new Batch(c);
            waiting.put(c, b);
        }
        b.queries.add(new ParkedQuery(client.alloc().buffer(message.readableBytes()).writeBytes(message,
                message.readerIndex(), message.readableBytes()), client, address));
        parked++;
        return RedisBackend.PARKED;
    }

    /** Queries parked now, waiting or in calls out. */
    int parked() {
        return parked;
    }

    /** At the end of a read burst: one call per slot for everything parked in it. */
    void send() {
        if (waiting.isEmpty() || roundsInFlight >= MAX_ROUNDS_IN_FLIGHT) {
            return;
        }
        Map<Integer, List<Batch>> bySlot = new HashMap<>();
        long now = limiter.clock().epochNanos();
        for (Batch b : waiting.values()) {
            b.window = RedisKeys.window(b.counter, now);
            b.key = RedisKeys.key(b.counter.cachedName(), b.window);
            bySlot.computeIfAbsent(backend.link().slot(b.key), s -> new ArrayList<>()).add(b);
        }
        waiting = new HashMap<>();
        int calls = 0;
        for (List<Batch> group : bySlot.values()) {
            calls += (group.size() + MAX_DOMAINS_PER_CALL - 1) / MAX_DOMAINS_PER_CALL;
        }
        Round round = new Round(calls);
        roundsInFlight++;
        for (List<Batch> group : bySlot.values()) {
            for (int from = 0; from < group.size(); from += MAX_DOMAINS_PER_CALL) {
                call(round, group.subList(from, Math.min(group.size(), from + MAX_DOMAINS_PER_CALL)), now);
            }
        }
    }

    /** The calls sent together; the round ends when the last is settled. */
    private static final class Round {
        int pending;

        Round(int calls) {
            this.pending = calls;
        }
    }

    private void call(Round round, List<Batch> batches, long now) {
        List<String> keys = new ArrayList<>(batches.size() * 2);
        String[] args = new String[1 + 4 * batches.size()];
        args[0] = sliding ? "s" : "f";
        int a = 1;
        for (Batch b : batches) {
            keys.add(b.key);
            long w = b.counter.policy().windowNanos();
            double share = 0;
            if (sliding) {
                keys.add(RedisKeys.key(b.counter.cachedName(), b.window - 1));
                share = 1.0 - (double) (now - b.window * w) / w;
            }
            args[a++] = Integer.toString(b.queries.size());
            args[a++] = Long.toString(b.counter.policy().queries());
            args[a++] = RedisKeys.ttlMillis(b.counter, sliding);
            args[a++] = Double.toString(share);
        }
        backend.link().run(backend.decideScript(), keys.toArray(new String[0]), args)
                .whenComplete((reply, error) -> {
                    try {
                        loop.execute(() -> settle(round, batches, reply, error));
                    } catch (RejectedExecutionException stopping) {
                        batches.forEach(b -> b.queries.forEach(q -> q.message().release()));
                    }
                });
    }

    private void settle(Round round, List<Batch> batches, List<Object> reply, Throwable error) {
        if (--round.pending == 0) {
            roundsInFlight--;
            send(); // what waited for this round
        }
        for (int i = 0; i < batches.size(); i++) {
            Batch b = batches.get(i);
            parked -= b.queries.size();
            if (error != null || reply == null || reply.size() <= i) {
                for (ParkedQuery q : b.queries) {
                    verdict(q, backend.failure(b.counter), b.counter);
                }
                continue;
            }
            long allowed = ((Number) reply.get(i)).longValue();
            if (allowed < b.queries.size()) {
                if (!sliding) {
                    ((SharedCounter) b.counter).overInWindow = (int) b.window;
                }
                limiter.noteRefusal(b.counter);
            }
            for (int q = 0; q < b.queries.size(); q++) {
                verdict(b.queries.get(q), q < allowed ? RedisBackend.ALLOWED : RedisBackend.REFUSED, b.counter);
            }
        }
    }

    private void verdict(ParkedQuery q, int decision, Counter c) {
        try {
            if (decision == RedisBackend.ALLOWED) {
                verdicts.allow(q);
            } else {
                verdicts.refuse(q, c);
            }
        } finally {
            q.message().release();
        }
    }
}
