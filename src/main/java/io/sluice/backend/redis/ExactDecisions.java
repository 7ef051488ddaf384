package io.sluice.backend.redis;

import io.netty.util.collection.IntObjectHashMap;
import io.sluice.config.BackendSettings;
import io.sluice.domain.DomainKey;
import io.sluice.domain.DomainProbe;
import io.sluice.limit.Algorithm;
import io.sluice.limit.CounterTable;
import io.sluice.limit.Decisions;
import io.sluice.limit.DomainLimiter;
import io.sluice.limit.Policy;
import io.sluice.pipeline.InternalErrors;
import io.sluice.pipeline.ParkedQuery;
import io.sluice.pipeline.Query;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Redis exact mode for one event loop. A query whose domain holds a lease ({@link Leases}) is
 * allowed at once; a round whose domain may take one reserves it with its own queries. Any other
 * query for a counted domain is parked (a copy of it) until
 * the end of the read burst, or while two rounds of calls are already out, until one returns. Then,
 * for each parked domain, the algorithm works out from the domain's last known word how many of
 * its queries the budget allows and the word after them, and one script call per cluster slot (one
 * in all on a standalone Redis) sets each word by compare-and-set. A domain whose word another
 * instance (or loop) changed meanwhile is worked out again from the word Redis returned, in the
 * next round, until its first query has waited the Redis timeout: then the failure policy decides.
 *
 * <p>The last known word is the counter's own word in the limiter's table, shared by the loops
 * (a batch keeps the slot and the domain's fingerprint, and a slot that no longer holds it is
 * retired): each call puts the
 * words it sends in it, by compare-and-set, just before it goes out, so that the next round of any
 * loop works on from them and mostly lands after it on the one connection, rather than racing it;
 * a lost round puts Redis's word in it. So the rounds of one process seldom lose to each other
 * (the metric {@code redis_conflicts} counts the losses), and the janitor keeps what Redis keeps.
 * Words only move toward less budget until their time passes, so a domain its last known word
 * already refuses is refused here, without a call; but not while a call (of any loop) that
 * reserved in that word is out: Redis may not take it, and then the failure policy decides. Such
 * a query waits for that call, at most the Redis timeout, then is refused: a round of its own loop
 * sends again when it settles, and while none is out the loop looks again every
 * {@value #RECHECK_MICROS} µs. Past {@link #MAX_PARKED} such queries are refused at once, so that a
 * flood is not let through.
 *
 * <p>No query waits longer than the Redis timeout, whatever its calls do: when a batch's first
 * query has waited that long, the failure policy decides the batch ({@link #expire}), and a call
 * still out for it then only settles the words. A batch whose server is away ({@link RedisLink})
 * is decided by the failure policy when its round would send it, without a call.
 *
 * <p>Only the loop's thread touches this object; the Redis reply is handed back to it with
 * {@link java.util.concurrent.Executor#execute}.
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
    /** How soon a loop with no round out looks again at batches waiting on another loop's call. */
    private static final long RECHECK_MICROS = 500;

    /** One domain's queries parked in this burst, and what this round asks for them. */
    private static final class Batch {
        final int slot;
        final long fingerprint;
        final DomainKey domain;
        /**
         * Its queries, those of clients that proved their address first: the budget allows a
         * prefix of them, since an unverified query's budget stops lower (limits.verified-share).
         */
        final List<ParkedQuery> queries = new ArrayList<>(4);
        /** How many of {@code queries}, at the front, are verified. */
        int verified;
        /** When the first of {@code queries} was parked ({@link System#nanoTime}). */
        final long parkedAt = System.nanoTime();
        /** Whether a call for it is out. */
        boolean calling;
        /** Whether its queries have their verdicts (and are released); read by a Lettuce thread only at shutdown. */
        volatile boolean decided;
        /** Rounds lost so far; after the first, {@code learnt} is the word Redis returned. */
        int tries;
        /** For a counter the janitor retired, whose heap word is gone. */
        long learnt;
        String key;
        long expected;
        long next;
        int allowed;
        /** Queries reserved in {@code next} beyond {@code allowed}, leased once the call succeeds, until {@code leaseEnd}. */
        int leased;
        long leaseEnd;
        /** The budget the lease is a share of. */
        Policy leaseBudget;

        Batch(int slot, long fingerprint, DomainKey domain) {
            this.slot = slot;
            this.fingerprint = fingerprint;
            this.domain = domain;
        }
    }

    private final ScheduledExecutorService loop;
    private final RedisBackend backend;
    private final DomainLimiter limiter;
    private final Algorithm algorithm;
    private final CounterTable table;
    private final Verdicts verdicts;
    private final InternalErrors errors;
    private final long timeoutNanos;
    private final Leases leases;
    /** By slot: a slot holds one domain for longer than a burst waits. */
    private IntObjectHashMap<Batch> waiting = new IntObjectHashMap<>();
    /**
     * Batches that lost a round, apart from {@code waiting}, so that each keeps its own wait: two
     * batches of one domain in one call chain, the later working on from the earlier's word.
     */
    private List<Batch> retrying = new ArrayList<>();
    /**
     * Every batch in the order it was made, which is the order of its deadline ({@code parkedAt}
     * plus the timeout); decided ones leave when they reach the head.
     */
    private final ArrayDeque<Batch> byAge = new ArrayDeque<>();
    private boolean sweepQueued;
    private int parked;
    private int roundsInFlight;
    private boolean recheckQueued;

    ExactDecisions(ScheduledExecutorService loop, RedisBackend backend, DomainLimiter limiter, Verdicts verdicts,
                   InternalErrors errors) {
        this.loop = loop;
        this.errors = errors;
        this.backend = backend;
        this.limiter = limiter;
        this.algorithm = limiter.algorithm();
        this.table = limiter.table();
        this.verdicts = verdicts;
        this.timeoutNanos = backend.settings().redisTimeout().toNanos();
        this.leases = backend.leases();
    }

    /**
     * Decides now when it can ({@link #ALLOWED}, {@link #REFUSED}): Redis away or slow, the domain
     * known over its budget, too much parked; else parks a copy of the query and returns
     * {@link #PARKED}.
     */
    @Override
    public int decide(int slot, DomainProbe domain, Query query) {
        long fp = limiter.fingerprint(slot);
        Policy whole = limiter.budget(slot);
        boolean verified = query.verified();
        Policy budget = verified ? whole : limiter.unverified(whole);
        long now = query.now();
        // A lease is the whole budget's: an unverified query under a lower ceiling asks Redis.
        if (budget == whole && leases.take(slot, fp, budget, now)) { // counted in Redis already
            backend.leased().increment();
            return ALLOWED;
        }
        if (!backend.link().callable()) {
            return backend.failure(slot, domain, now, verified);
        }
        boolean overIfTaken = algorithm.acquire(table.wordOf(slot, fp), budget, now) == Algorithm.REFUSE;
        if (overIfTaken && (parked >= MAX_PARKED || !backend.reserving(slot))) { // a flood is never let through
            limiter.noteRefusal(slot, domain);
            return REFUSED;
        }
        if (parked >= MAX_PARKED) {
            return backend.failure(slot, domain, now, verified);
        }
        Batch b = waiting.get(slot);
        if (b != null && b.decided) { // expired while waiting for a round
            b = null;
        } else if (b != null && b.fingerprint != fp) { // the slot's domain of this burst was retired: rare
            retrying.add(b); // it goes on its own, from what Redis says
            b = null;
        }
        if (b == null) {
            b = new Batch(slot, fp, limiter.keptAs(slot, domain).toKey());
            waiting.put(slot, b);
            byAge.add(b);
            sweepSoon();
        }
        if (verified) {
            b.queries.add(b.verified++, query.park());
        } else {
            b.queries.add(query.park());
        }
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
        if ((waiting.isEmpty() && retrying.isEmpty()) || roundsInFlight >= MAX_ROUNDS_IN_FLIGHT) {
            return;
        }
        long now = limiter.clock().epochNanos();
        List<Batch> taken = retrying; // first: they went before
        taken.addAll(waiting.values());
        waiting = new IntObjectHashMap<>();
        retrying = new ArrayList<>();
        List<Batch> asking = new ArrayList<>(taken.size());
        for (Batch b : taken) {
            if (b.decided) {
                continue; // expired while it waited
            }
            if (!lastKnownRefuses(b, now)) {
                if (b.key == null) {
                    b.key = RedisKeys.key(b.domain, limiter.policyOf(b.fingerprint), backend.algorithmName());
                }
                if (backend.link().away(b.key)) {
                    fail(b); // its server is away: no call until it answers again
                } else {
                    asking.add(b); // worked out in full when its call goes
                }
            } else if (backend.reserving(b.slot)) {
                // Refused only by what Redis may not take: wait for it, until the batch expires.
                if (b.tries > 0 || waiting.containsKey(b.slot)) { // a retired domain's batch and its slot's new one
                    retrying.add(b);
                } else {
                    waiting.put(b.slot, b);
                }
            } else {
                settle(b, 0); // its last known word refuses them all
            }
        }
        if (asking.isEmpty() && roundsInFlight == 0 && !(waiting.isEmpty() && retrying.isEmpty())) {
            // No round of this loop is out to send again when it settles: the reservation the
            // waiting batches wait on is another loop's, which Redis may still turn down. Refused
            // at once, they would be refused for queries that may never count.
            recheckSoon();
        }
        if (asking.isEmpty()) {
            return;
        }
        List<List<Batch>> calls = backend.link().calls(asking, b -> backend.link().slot(b.key));
        Round round = new Round(calls.size());
        roundsInFlight++;
        for (List<Batch> batches : calls) {
            call(round, batches);
        }
    }

    /** Works out, from the last known word, the word after as many of {@code b}'s queries as the budget allows. */
    private void workOut(Batch b, long now) {
        Policy budget = limiter.budgetOf(b.slot, b.fingerprint);
        Policy unverified = limiter.unverified(budget);
        long word = lastKnown(b);
        b.expected = word;
        int allowed = 0;
        while (allowed < b.queries.size()) {
            long next = algorithm.acquire(word, allowed < b.verified ? budget : unverified, now);
            if (next == Algorithm.REFUSE) {
                break;
            }
            word = next;
            allowed++;
        }
        b.leased = 0;
        if (allowed == b.queries.size()) {
            word = lease(b, word, budget, now);
        }
        b.next = word;
        b.allowed = allowed;
    }

    /**
     * {@code word} with a lease for {@code b}'s domain added ({@link Leases}), when it may take one:
     * a fixed window, a budget of 4,096 or more, no lease of its own in force nor another call
     * out that reserved in its word, and the window's count with the lease under half the budget.
     */
    private long lease(Batch b, long word, Policy budget, long now) {
        long share = SyncedCounters.heldAtMost(budget);
        long end = algorithm.leaseUntil(now, budget);
        if (share == 0 || end == 0 || backend.reserving(b.slot) || leases.holds(b.slot, b.fingerprint, now)) {
            return word;
        }
        long leased = algorithm.addToCurrent(word, budget, now, share);
        if (algorithm.acquire(algorithm.addToCurrent(leased, budget, now, budget.queries() / 2), budget, now)
                == Algorithm.REFUSE) {
            return word; // half the budget spent, or about to be: each query asks Redis
        }
        b.leased = (int) share;
        b.leaseEnd = end;
        b.leaseBudget = budget;
        return leased;
    }

    /** Whether the word {@code b} is worked out from refuses even its first query at {@code now}. */
    private boolean lastKnownRefuses(Batch b, long now) {
        Policy budget = limiter.budgetOf(b.slot, b.fingerprint);
        return algorithm.acquire(lastKnown(b), b.verified > 0 ? budget : limiter.unverified(budget), now)
                == Algorithm.REFUSE;
    }

    /** The word {@code b} is worked out from. */
    private long lastKnown(Batch b) {
        return table.retired(b.slot, b.fingerprint) && b.tries > 0 ? b.learnt : table.wordOf(b.slot, b.fingerprint);
    }

    /**
     * Makes {@code b}'s next word the last known word, unless another loop's round changed it
     * since {@link #workOut}: false then, and {@code b} is to be worked out again.
     */
    private boolean reserve(Batch b) {
        return table.retired(b.slot, b.fingerprint)
                || table.compareAndSetWord(b.slot, b.fingerprint, b.expected, b.next);
    }

    /** The calls sent together; the round ends when the last is settled. */
    private static final class Round {
        int pending;

        Round(int calls) {
            this.pending = calls;
        }
    }

    /**
     * Sends one call. Each batch is worked out again and its word reserved just before the call
     * goes, so that little runs between a reservation and the call's place on the connection.
     * A batch that no query of fits any more goes too, setting its word to itself, and is refused.
     */
    private void call(Round round, List<Batch> batches) {
        long now = limiter.clock().epochNanos(); // as late as it can be: another loop's words may be newer
        String[] keys = new String[batches.size()];
        String[] args = new String[4 * batches.size()];
        for (int i = 0; i < batches.size(); i++) {
            Batch b = batches.get(i);
            keys[i] = b.key;
            workOut(b, now);
            RedisKeys.casArguments(args, 4 * i, algorithm, limiter.policyOf(b.fingerprint), b.expected, b.next, now);
        }
        for (int i = 0; i < batches.size(); i++) {
            Batch b = batches.get(i);
            while (!reserve(b)) {
                workOut(b, now);
                RedisKeys.casArguments(args, 4 * i, algorithm, limiter.policyOf(b.fingerprint), b.expected, b.next, now);
            }
            backend.reserved(b.slot);
            b.calling = true;
        }
        backend.link().run(backend.casScript(), keys, args)
                .whenComplete((reply, error) -> {
                    try {
                        loop.execute(() -> settle(round, batches, reply, error));
                    } catch (RejectedExecutionException stopping) {
                        batches.forEach(b -> {
                            backend.settled(b.slot);
                            if (!b.decided) {
                                b.queries.forEach(ParkedQuery::release);
                            }
                        });
                    }
                });
    }

    private void settle(Round round, List<Batch> batches, List<Object> reply, Throwable error) {
        for (int i = 0; i < batches.size(); i++) {
            Batch b = batches.get(i);
            backend.settled(b.slot);
            b.calling = false;
            boolean countedHere = b.decided && backend.settings().redisFailure() == BackendSettings.RedisFailure.LOCAL;
            if (error != null || reply == null || reply.size() <= i) {
                if (countedHere) { // what local allowed stays counted here, without a lease Redis never took
                    table.compareAndSetWord(b.slot, b.fingerprint, b.next, withAllowed(b, b.expected));
                } else {
                    forget(b);
                }
                if (!b.decided) {
                    fail(b);
                }
            } else if (reply.get(i) instanceof Long) {
                // The heap word holds b.next, or a later round's; or a round that reached Redis
                // before this one, though reserved after it, lost and put back what this replaced.
                table.compareAndSetWord(b.slot, b.fingerprint, b.expected, b.next);
                if (b.leased > 0) {
                    leases.grant(b.slot, b.fingerprint, b.leaseEnd, b.leaseBudget, b.leased);
                }
                if (!b.decided) {
                    settle(b, b.allowed);
                }
            } else {
                long word = RedisKeys.word(reply.get(i));
                // Unless a later round reserved on top of b (it loses too, and learns then).
                table.compareAndSetWord(b.slot, b.fingerprint, b.next, countedHere ? withAllowed(b, word) : word);
                backend.conflicts().increment();
                b.learnt = word;
                b.tries++;
                if (!b.decided) {
                    again(b); // until it expires
                }
            }
        }
        if (--round.pending == 0) {
            roundsInFlight--;
            send(); // what waited for this round, and what lost it
        }
    }

    /** {@code word} with the queries {@link #expire} allowed from {@code b}'s reservation counted in it. */
    private long withAllowed(Batch b, long word) {
        return algorithm.addToCurrent(word, limiter.budgetOf(b.slot, b.fingerprint), limiter.clock().epochNanos(), b.allowed);
    }

    /** Calls {@link #send} again shortly, once: waiting batches then go, wait on, or are refused. */
    private void recheckSoon() {
        if (!recheckQueued) {
            recheckQueued = true;
            loop.schedule(() -> {
                recheckQueued = false;
                send();
            }, RECHECK_MICROS, TimeUnit.MICROSECONDS);
        }
    }

    /** Puts a batch that lost its compare-and-set back, to go again in the next round. */
    private void again(Batch b) {
        retrying.add(b);
    }

    /**
     * Takes back the word a failed call reserved, which Redis never took. When a later round has
     * reserved on top of it, the word Redis holds is unknown: 0, so that the next call learns it.
     * Either order of two failed rounds ends right: the later first, each undoes its own; the
     * earlier first, both end at 0.
     */
    private void forget(Batch b) {
        if (!table.compareAndSetWord(b.slot, b.fingerprint, b.next, b.expected)) {
            table.replace(b.slot, b.fingerprint, word -> 0);
        }
    }

    /** Calls {@link #sweep} when the oldest batch not yet decided is due, unless a call is queued. */
    private void sweepSoon() {
        while (!byAge.isEmpty() && byAge.peek().decided) {
            byAge.poll();
        }
        if (!sweepQueued && !byAge.isEmpty()) {
            sweepQueued = true;
            long due = byAge.peek().parkedAt + timeoutNanos - System.nanoTime();
            loop.schedule(this::sweep, Math.max(0, due), TimeUnit.NANOSECONDS);
        }
    }

    /** Expires every batch whose first query has waited the Redis timeout; one that throws stops none of the rest. */
    private void sweep() {
        sweepQueued = false;
        long now = System.nanoTime();
        for (Batch b; (b = byAge.peek()) != null && (b.decided || now - b.parkedAt >= timeoutNanos); ) {
            byAge.poll();
            if (!b.decided) {
                try {
                    expire(b);
                } catch (RuntimeException e) {
                    errors.caught(InternalErrors.nameOf(verdicts), "a parked batch's expiry", "the others go on", e);
                }
            }
        }
        sweepSoon();
    }

    /**
     * {@code b}'s first query has waited the Redis timeout: its verdicts are given now. A batch
     * its last known word refuses, with no call out for it, is refused (it waited on another's
     * reservation); any other is the failure policy's, and with a call out, {@code local} allows
     * what the call reserved in this process's word, which counts them.
     */
    private void expire(Batch b) {
        if (!b.calling) {
            if (lastKnownRefuses(b, limiter.clock().epochNanos())) {
                settle(b, 0);
            } else {
                fail(b);
            }
            return;
        }
        decided(b);
        for (int q = 0; q < b.queries.size(); q++) {
            verdict(b.queries.get(q), backend.failure(q < b.allowed), b);
        }
    }

    /** {@code b}'s verdicts are being given: it leaves the parked count, and its wait is recorded. */
    private void decided(Batch b) {
        b.decided = true;
        parked -= b.queries.size();
        backend.waits().observeNanos(System.nanoTime() - b.parkedAt);
    }

    /** The first {@code allowed} of {@code b}'s queries pass, the rest are refused. */
    private void settle(Batch b, int allowed) {
        decided(b);
        if (allowed < b.queries.size()) {
            limiter.noteRefusal(b.slot, b.fingerprint, b.domain);
        }
        for (int q = 0; q < b.queries.size(); q++) {
            verdict(b.queries.get(q), q < allowed ? ALLOWED : REFUSED, b);
        }
    }

    /** Redis gave no answer for {@code b}: the failure policy decides each query. */
    private void fail(Batch b) {
        decided(b);
        for (ParkedQuery q : b.queries) {
            verdict(q, backend.failure(b.domain, q.route().verified()), b);
        }
    }

    /**
     * Hands one verdict to the limit stage. A stage that throws must not leave the rest of the
     * round parked (unreleased, unanswered, counted in {@link #parked}): the error is counted and
     * logged ({@link InternalErrors}) and the round goes on.
     */
    private void verdict(ParkedQuery q, int decision, Batch b) {
        try {
            if (decision == ALLOWED) {
                verdicts.allow(q);
            } else {
                verdicts.refuse(q, b.slot, b.domain);
            }
        } catch (RuntimeException e) {
            errors.caught(InternalErrors.nameOf(verdicts), "a parked query's verdict", "the others go on", e);
        } finally {
            q.release();
        }
    }
}
