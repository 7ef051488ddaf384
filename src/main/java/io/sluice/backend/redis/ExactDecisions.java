package io.sluice.backend.redis;

import io.sluice.limit.Counter;
import io.sluice.limit.Decisions;
import io.sluice.limit.DomainLimiter;
import io.sluice.limit.SharedCounter;
import io.sluice.pipeline.ParkedQuery;
import io.sluice.pipeline.Query;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Redis exact mode for one event loop. A query for a counted domain is parked (a copy of it) until
 * the end of the read burst, or while two rounds of calls are already out, until one returns; then
 * one script call per cluster slot (one in all on a standalone Redis) asks for every parked domain
 * at once, each as one increment by its number of queries, and the reply, run back on the loop,
 * says how many of each domain's queries are allowed. A fixed-window domain found over its budget
 * is refused here, without a call, until its window ends.
 *
 * <p>Only the loop's thread touches this object; the Redis reply is handed back to it with
 * {@link Executor#execute}. A query waits at most the Redis timeout: a failed or late call is
 * decided by the failure policy.
 */
final class ExactDecisions implements Decisions {
    private static final Logger log = LoggerFactory.getLogger(ExactDecisions.class);
    /** Parked queries of one loop at once; past this, the failure policy decides at once. */
    private static final int MAX_PARKED = 65_536;
    /**
     * Rounds of calls a loop has in flight at once. While they are out, new queries wait for the
     * next round, so under load each round carries more domains and each query costs fewer calls
     * and thread wake-ups; when idle a query goes at the end of its own burst.
     */
    private static final int MAX_ROUNDS_IN_FLIGHT = 2;

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

    private final Executor loop;
    private final RedisBackend backend;
    private final DomainLimiter limiter;
    private final Verdicts verdicts;
    private final boolean sliding;
    private Map<Counter, Batch> waiting = new HashMap<>();
    private int parked;
    private int roundsInFlight;

    ExactDecisions(Executor loop, RedisBackend backend, DomainLimiter limiter, Verdicts verdicts) {
        this.loop = loop;
        this.backend = backend;
        this.limiter = limiter;
        this.verdicts = verdicts;
        this.sliding = backend.sliding();
    }

    /**
     * Decides now when it can ({@link #ALLOWED}, {@link #REFUSED}): Redis away or slow, the domain
     * known over its budget for this window, too much parked; else parks a copy of the query and
     * returns {@link #PARKED}.
     */
    @Override
    public int decide(Counter c, Query query) {
        if (!backend.link().up()) {
            return backend.failure(c);
        }
        long now = limiter.clock().epochNanos();
        if (!sliding && ((SharedCounter) c).overInWindow == (int) RedisKeys.window(c, now)) {
            limiter.noteRefusal(c);
            return REFUSED;
        }
        if (parked >= MAX_PARKED) {
            return backend.failure(c);
        }
        Batch b = waiting.get(c);
        if (b == null) {
            b = new Batch(c);
            waiting.put(c, b);
        }
        b.queries.add(query.park());
        parked++;
        return PARKED;
    }

    /** Queries parked now, waiting or in calls out. */
    @Override
    public int parked() {
        return parked;
    }

    @Override
    public void endOfBurst() {
        send();
    }

    /** At the end of a read burst: one call per slot for everything parked in it. */
    private void send() {
        if (waiting.isEmpty() || roundsInFlight >= MAX_ROUNDS_IN_FLIGHT) {
            return;
        }
        long now = limiter.clock().epochNanos();
        for (Batch b : waiting.values()) {
            b.window = RedisKeys.window(b.counter, now);
            b.key = RedisKeys.key(b.counter.cachedName(), b.window);
        }
        List<List<Batch>> calls = backend.link().calls(waiting.values(), b -> backend.link().slot(b.key));
        waiting = new HashMap<>();
        Round round = new Round(calls.size());
        roundsInFlight++;
        for (List<Batch> batches : calls) {
            call(round, batches, now);
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
            args[a++] = Long.toString(b.counter.budget().queries());
            args[a++] = RedisKeys.ttlMillis(b.counter, sliding);
            args[a++] = Double.toString(share);
        }
        backend.link().run(backend.decideScript(), keys.toArray(new String[0]), args)
                .whenComplete((reply, error) -> {
                    try {
                        loop.execute(() -> settle(round, batches, reply, error));
                    } catch (RejectedExecutionException stopping) {
                        batches.forEach(b -> b.queries.forEach(ParkedQuery::release));
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
                verdict(b.queries.get(q), q < allowed ? ALLOWED : REFUSED, b.counter);
            }
        }
    }

    /**
     * Hands one verdict to the limit stage. A stage that throws must not leave the rest of the
     * round parked (unreleased, unanswered, counted in {@link #parked}): the error is logged and
     * the round goes on.
     */
    private void verdict(ParkedQuery q, int decision, Counter c) {
        try {
            if (decision == ALLOWED) {
                verdicts.allow(q);
            } else {
                verdicts.refuse(q, c);
            }
        } catch (RuntimeException e) {
            log.error("a parked query's verdict failed; the others go on", e);
        } finally {
            q.release();
        }
    }
}
