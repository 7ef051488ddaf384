package io.sluice.backend.redis;

import io.sluice.limit.Algorithm;
import io.sluice.limit.Counter;
import io.sluice.limit.Decisions;
import io.sluice.limit.DomainLimiter;
import io.sluice.limit.HeapCounters;
import io.sluice.limit.Policy;
import io.sluice.pipeline.ParkedQuery;
import io.sluice.pipeline.Query;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.LoggerFactory;

/**
 * Redis exact mode for one event loop. A query for a counted domain is parked (a copy of it) until
 * the end of the read burst, or while two rounds of calls are already out, until one returns. Then,
 * for each parked domain, the algorithm works out from the domain's last known word how many of
 * its queries the budget allows and the word after them, and one script call per cluster slot (one
 * in all on a standalone Redis) sets each word by compare-and-set. A domain whose word another
 * instance (or loop) changed meanwhile is worked out again from the word Redis returned, in the
 * next round; after {@link #MAX_TRIES} lost rounds the failure policy decides its queries.
 *
 * <p>The last known word is the counter's own (heap) word, so the janitor keeps what Redis keeps.
 * Words only move toward less budget until their time passes, so a domain that its last known word
 * already refuses is refused here, without a call.
 *
 * <p>Only the loop's thread touches this object; the Redis reply is handed back to it with
 * {@link Executor#execute}. A query waits at most the Redis timeout per round: a failed or late
 * call is decided by the failure policy.
 */
final class ExactDecisions implements Decisions {
    /** Parked queries of one loop at once; past this, the failure policy decides at once. */
    private static final int MAX_PARKED = 65_536;
    /**
     * Rounds of calls a loop has in flight at once. While they are out, new queries wait for the
     * next round, so under load each round carries more domains and each query costs fewer calls
     * and thread wake-ups; when idle a query goes at the end of its own burst.
     */
    private static final int MAX_ROUNDS_IN_FLIGHT = 2;
    /** Rounds a domain's queries may lose to other writers of its word before the failure policy decides them. */
    private static final int MAX_TRIES = 8;

    /** One domain's queries parked in this burst, and what this round asks for them. */
    private static final class Batch {
        final Counter counter;
        final List<ParkedQuery> queries = new ArrayList<>(4);
        int tries;
        String key;
        long expected;
        long next;
        int allowed;

        Batch(Counter counter) {
            this.counter = counter;
        }
    }

    private final Executor loop;
    private final RedisBackend backend;
    private final DomainLimiter limiter;
    private final Algorithm algorithm;
    private final Verdicts verdicts;
    private Map<Counter, Batch> waiting = new HashMap<>();
    private int parked;
    private int roundsInFlight;

    ExactDecisions(Executor loop, RedisBackend backend, DomainLimiter limiter, Verdicts verdicts) {
        this.loop = loop;
        this.backend = backend;
        this.limiter = limiter;
        this.algorithm = limiter.algorithm();
        this.verdicts = verdicts;
    }

    /**
     * Decides now when it can ({@link #ALLOWED}, {@link #REFUSED}): Redis away or slow, the domain
     * known over its budget, too much parked; else parks a copy of the query and returns
     * {@link #PARKED}.
     */
    @Override
    public int decide(Counter c, Query query) {
        if (!backend.link().up()) {
            return backend.failure(c);
        }
        if (algorithm.acquire(HeapCounters.word(c), c.budget(), limiter.clock().epochNanos()) == Algorithm.REFUSE) {
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
        List<Batch> asking = new ArrayList<>(waiting.size());
        Map<Counter, Batch> taken = waiting;
        waiting = new HashMap<>();
        for (Batch b : taken.values()) {
            if (workOut(b, now)) {
                asking.add(b);
            } else {
                settle(b, 0); // its last known word refuses them all
            }
        }
        if (asking.isEmpty()) {
            return;
        }
        List<List<Batch>> calls = backend.link().calls(asking, b -> backend.link().slot(b.key));
        Round round = new Round(calls.size());
        roundsInFlight++;
        for (List<Batch> batches : calls) {
            call(round, batches, now);
        }
    }

    /** The word after as many of {@code b}'s queries as the budget allows; false when none is. */
    private boolean workOut(Batch b, long now) {
        Policy budget = b.counter.budget();
        long word = HeapCounters.word(b.counter);
        b.expected = word;
        int allowed = 0;
        while (allowed < b.queries.size()) {
            long next = algorithm.acquire(word, budget, now);
            if (next == Algorithm.REFUSE) {
                break;
            }
            word = next;
            allowed++;
        }
        b.next = word;
        b.allowed = allowed;
        if (b.key == null) {
            b.key = RedisKeys.key(b.counter, backend.algorithmName());
        }
        return allowed > 0;
    }

    /** The calls sent together; the round ends when the last is settled. */
    private static final class Round {
        int pending;

        Round(int calls) {
            this.pending = calls;
        }
    }

    private void call(Round round, List<Batch> batches, long now) {
        String[] keys = new String[batches.size()];
        String[] args = new String[3 * batches.size()];
        for (int i = 0; i < batches.size(); i++) {
            Batch b = batches.get(i);
            keys[i] = b.key;
            args[3 * i] = Long.toString(b.expected);
            args[3 * i + 1] = Long.toString(b.next);
            args[3 * i + 2] = RedisKeys.ttlMillis(algorithm, b.next, b.counter, now);
        }
        backend.link().run(backend.casScript(), keys, args)
                .whenComplete((reply, error) -> {
                    try {
                        loop.execute(() -> settle(round, batches, reply, error));
                    } catch (RejectedExecutionException stopping) {
                        batches.forEach(b -> b.queries.forEach(ParkedQuery::release));
                    }
                });
    }

    private void settle(Round round, List<Batch> batches, List<Object> reply, Throwable error) {
        for (int i = 0; i < batches.size(); i++) {
            Batch b = batches.get(i);
            if (error != null || reply == null || reply.size() <= i) {
                fail(b);
            } else if (reply.get(i) instanceof Long) {
                long word = b.next;
                HeapCounters.replace(b.counter, known -> word);
                settle(b, b.allowed);
            } else {
                long word = RedisKeys.word(reply.get(i));
                HeapCounters.replace(b.counter, known -> word);
                if (++b.tries >= MAX_TRIES) {
                    fail(b);
                } else {
                    again(b);
                }
            }
        }
        if (--round.pending == 0) {
            roundsInFlight--;
            send(); // what waited for this round, and what lost it
        }
    }

    /** Puts a batch that lost its compare-and-set back, ahead of its domain's newer queries. */
    private void again(Batch b) {
        Batch newer = waiting.put(b.counter, b);
        if (newer != null) {
            b.queries.addAll(newer.queries);
        }
    }

    /** The first {@code allowed} of {@code b}'s queries pass, the rest are refused. */
    private void settle(Batch b, int allowed) {
        parked -= b.queries.size();
        if (allowed < b.queries.size()) {
            limiter.noteRefusal(b.counter);
        }
        for (int q = 0; q < b.queries.size(); q++) {
            verdict(b.queries.get(q), q < allowed ? ALLOWED : REFUSED, b.counter);
        }
    }

    /** Redis gave no answer for {@code b}: the failure policy decides each query. */
    private void fail(Batch b) {
        parked -= b.queries.size();
        for (ParkedQuery q : b.queries) {
            verdict(q, backend.failure(b.counter), b.counter);
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
            LoggerFactory.getLogger(ExactDecisions.class).error("a parked query's verdict failed; the others go on", e);
        } finally {
            q.release();
        }
    }
}
