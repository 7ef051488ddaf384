package io.sluice.backend.redis;

import io.sluice.limit.Algorithm;
import io.sluice.limit.CounterTable;
import io.sluice.limit.DomainLimiter;
import io.sluice.pipeline.InternalErrors;
import io.sluice.limit.Policy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.TimeoutException;

/**
 * Redis async mode: the event loops decide with the in-process words, and this thread, every sync
 * interval, adds what each domain allowed here since the last pass to the domain's word in Redis
 * (the algorithm's {@link Algorithm#addToCurrent}, set by compare-and-set) and makes the result,
 * plus what the loops allowed meanwhile, the local word: each instance soon decides on the
 * fleet's count.
 *
 * <p>Only domains that allowed a query here since the last pass are synced, and a domain far from
 * its budget waits: while what it allowed here unpushed is under {@link SyncedCounters#heldAtMost}
 * (about 1/64 of its budget's queries), its counts stay with the loops (the slot is not idle
 * meanwhile) and the domain waits in {@link #wheel}, looked at again when its time is up (a pass or
 * so before, where a late look would push late); the loop whose count reaches the share queues it
 * again at once. Its time: where counts last exactly their window (a fixed window,
 * {@link Algorithm#leaseUntil}), the window's last interval. That look takes the loops' counts
 * into {@link #pending} (unpushed; the slot may then go idle), and the first look after the
 * window's end drops them: what a window held under the share matters to no later window, and is
 * never pushed. What the loops allowed after that last look, or all of it when a late pass missed
 * the look, counts toward the next window's share instead: never fewer counted than allowed. With the other algorithms the time is the window's last two
 * passes, when the domain is pushed, or the moment its word would leave the slot idle; there,
 * counts first taken in a window's last two passes are held to the next window's (and with a
 * window of two intervals or less, to its end). Most domains are far from their budgets, so with
 * a fixed window most are never pushed, and every push costs this thread and Redis alike
 * (docs/benchmarks.md, "Backends"). A sliding window's or a token bucket's pass late by more than
 * an interval (Redis slow) pushes into the next window what it held.
 * Each instance then holds back from the fleet at most that share of a domain's budget in a
 * window: the overshoot docs/design.md states for async mode grows by (N-1) x budget / 64, and a
 * budget under 4,096 queries is pushed every pass.
 *
 * <p>A compare-and-set that loses (another instance wrote the word) is worked out again from the
 * word Redis returned, up to {@link #TRIES} times in a pass, then waits for the next pass. A failed
 * call drops its counts: they belong to windows Redis may not see again, and dropping errs toward
 * answering.
 */
final class DeltaSync implements AutoCloseable {
    private static final int TRIES = 3;
    /** Passes {@link #wheel} looks ahead: a domain held longer is looked at again, and held again. */
    private static final int WHEEL = 64;

    /** One domain's push in a pass: its counter's slot, fingerprint and key, and its key's cluster slot. */
    private record Push(int slot, long fingerprint, String key, int keySlot) {
    }

    private final RedisBackend backend;
    private final InternalErrors errors;
    private final DomainLimiter limiter;
    private final Algorithm algorithm;
    private final SyncedCounters counters;
    private final CounterTable table;
    private final Duration interval;
    /**
     * Per counter slot, what this thread knows of its domain's word in Redis and what it took
     * from the loops and has not yet pushed, for the domain whose fingerprint it holds: a slot
     * the janitor gave to another domain starts again from nothing. This thread's only.
     */
    private final long[] knownFor;
    private final long[] known;
    private final int[] pending;
    /** When the pass that took the first of the slot's counts not in Redis ran, in the limiter's clock's nanoseconds. */
    private final long[] pendingSince;
    /** The pass a held domain waits for in {@link #wheel}, 0 for none: an entry of another pass is stale. */
    private final int[] heldUntil;
    /** The last pass that took the slot's counts: each domain is pushed once a pass. */
    private final int[] takenIn;
    /** Held domains by the pass (modulo {@link #WHEEL}) that looks at them again. */
    private final List<List<SyncedCounters.Dirty>> wheel = new ArrayList<>();
    private int passes;
    /** Domains whose counts lost every try of the last pass: they go first in the next. */
    private List<Push> carried = new ArrayList<>();
    /** Passes run, for the metrics (and the tests that wait for a pass). */
    private final LongAdder passesDone;
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sluice-redis-sync");
        t.setDaemon(true);
        return t;
    });

    DeltaSync(RedisBackend backend, DomainLimiter limiter, SyncedCounters counters, Duration interval,
              InternalErrors errors, LongAdder passesDone) {
        this.backend = backend;
        this.passesDone = passesDone;
        this.errors = errors;
        this.limiter = limiter;
        this.algorithm = limiter.algorithm();
        this.counters = counters;
        this.table = limiter.table();
        this.interval = interval;
        this.knownFor = new long[table.capacity() + 1];
        this.known = new long[table.capacity() + 1];
        this.pending = new int[table.capacity() + 1];
        this.pendingSince = new long[table.capacity() + 1];
        this.heldUntil = new int[table.capacity() + 1];
        this.takenIn = new int[table.capacity() + 1];
        for (int i = 0; i < WHEEL; i++) {
            wheel.add(new ArrayList<>());
        }
    }

    void start() {
        long ms = interval.toMillis();
        thread.scheduleWithFixedDelay(() -> {
            try {
                pass();
            } catch (RuntimeException e) {
                // a bug (Redis's own failures come back as failed calls): a thrown task would
                // never run again, so it is counted and logged at most once a minute, and the
                // next pass tries afresh
                errors.caught("DeltaSync", "a sync pass", "the next pass tries afresh", e);
            } finally {
                passesDone.increment();
            }
        }, ms, ms, TimeUnit.MILLISECONDS);
    }

    private void pass() {
        long now = limiter.clock().epochNanos();
        int pass = ++passes == 0 ? ++passes : passes; // 0 is no pass; a stamp 2^32 passes old is looked at once more
        List<Push> due = carried;
        carried = new ArrayList<>();
        due.removeIf(p -> !table.holds(p.slot(), p.fingerprint())); // the slot went to another domain
        for (Push p : due) {
            takenIn[p.slot()] = pass;
        }
        List<SyncedCounters.Dirty> up = wheel.get(Integer.remainderUnsigned(pass, WHEEL));
        wheel.set(Integer.remainderUnsigned(pass, WHEEL), new ArrayList<>());
        for (SyncedCounters.Dirty c : up) {
            if (heldUntil[c.slot()] == pass) { // else pushed since, queued by the loop that reached the share
                take(c, now, pass, due);
            }
        }
        SyncedCounters.Dirty c;
        while ((c = counters.dirty.poll()) != null) {
            take(c, now, pass, due);
        }
        for (int t = 0; t < TRIES && !due.isEmpty(); t++) {
            List<Push> lost = new ArrayList<>();
            for (List<Push> call : backend.link().calls(due, Push::keySlot)) {
                push(call, lost);
            }
            due = lost;
        }
        carried = due;
    }

    /**
     * Takes what the loops allowed for {@code c}'s domain into {@code due}, unless the domain holds
     * its counts back: then they stay with the loops (or, in a fixed window's last interval, in
     * {@link #pending}), and the domain waits in {@link #wheel}.
     */
    private void take(SyncedCounters.Dirty c, long now, int pass, List<Push> due) {
        if (!table.holds(c.slot(), c.fingerprint())) {
            return; // retired: its window's counts are dropped, and the slot's next domain queues itself
        }
        int s = c.slot();
        if (knownFor[s] != c.fingerprint()) { // the slot's first domain here, or another than before
            knownFor[s] = c.fingerprint();
            known[s] = 0;
            pending[s] = 0;
            heldUntil[s] = 0;
            takenIn[s] = 0;
        }
        Policy budget = limiter.budget(s);
        boolean held = heldUntil[s] != 0;
        if (takenIn[s] == pass) {
            if (!held) {
                pending[s] += counters.takeUnsynced(s); // queued twice, or carried: they go together
                return;
            }
            if (pending[s] + counters.unsynced(s) < SyncedCounters.heldAtMost(budget)) {
                return; // held earlier in this pass, and still under its share
            }
        }
        takenIn[s] = pass;
        heldUntil[s] = 0; // its time is up, or the loops' counts are looked at again
        if (!held && pending[s] == 0) {
            pendingSince[s] = now; // queued by its first count since the last take
        }
        long iv = interval.toNanos();
        long expiry = algorithm.leaseUntil(pendingSince[s], budget);
        if (expiry != 0 && now >= expiry) {
            // The window the counts here were counted in is over: what it held under its share
            // matters to no later window, and is never pushed. What the loops allowed since the
            // last look stays with them, for the window now.
            pending[s] = 0;
            pendingSince[s] = now;
            expiry = algorithm.leaseUntil(now, budget);
        }
        boolean under = pending[s] + counters.unsynced(s) < SyncedCounters.heldAtMost(budget);
        long until = expiry != 0 ? expiry - iv : heldUntil(pendingSince[s], budget, table.wordOf(s, c.fingerprint()), now);
        if (under && now < until) {
            // A fixed window's next look is when its time is up: a look that lands late, past the
            // window's end (each pass runs an interval after the last one ended), leaves its counts
            // to the next window's share, never fewer counted than allowed. Else a look a pass or
            // so before, an eighth of the passes left earlier, so that a late pass still pushes in time.
            long passesLeft = (until - now + iv - 1) / iv;
            hold(c, pass, expiry != 0 ? passesLeft : passesLeft - 1 - passesLeft / 8);
            return;
        }
        if (under && now < expiry) {
            // The window's last interval: its counts taken, unpushed, for the look after its end,
            // which drops them; the loops' next count queues the domain again. The clock is read
            // again, as late as it can be: a pass that began in the window may reach this domain
            // in the next, whose counts the loops hold then (they wait for the next look).
            if (limiter.clock().epochNanos() < expiry) {
                pending[s] += counters.takeUnsynced(s);
            }
            hold(c, pass, 1);
            return;
        }
        pending[s] += counters.takeUnsynced(s);
        if (pending[s] > 0) {
            String key = RedisKeys.key(c.domain(), limiter.policyOf(c.fingerprint()), backend.algorithmName());
            due.add(new Push(s, c.fingerprint(), key, backend.link().slot(key)));
        }
    }

    /** Puts {@code c}'s domain in {@link #wheel} to be looked at again {@code passes} (at least 1) from {@code pass}. */
    private void hold(SyncedCounters.Dirty c, int pass, long passes) {
        int at = pass + (int) Math.max(1, Math.min(WHEEL - 1, passes));
        heldUntil[c.slot()] = at == 0 ? 1 : at;
        wheel.get(Integer.remainderUnsigned(heldUntil[c.slot()], WHEEL)).add(c);
    }

    /**
     * Until when counts held since {@code since}, where counts outlive their window (a sliding
     * window, a token bucket), may wait: two intervals before the end of their window, or of the
     * next for counts taken in a window's last two intervals (pushed later, they count in the
     * next), and no longer than the domain's {@code word} keeps its slot busy (a token bucket full
     * again is idle: a held slot is not, and would stay out of the janitor's reach).
     */
    private long heldUntil(long since, Policy budget, long word, long now) {
        long window = budget.windowNanos();
        long iv = interval.toNanos();
        long last = Math.floorDiv(since + 2 * iv, window) * window + window - 2 * iv;
        return Math.min(last, now + algorithm.idleIn(word, budget, now));
    }

    /**
     * One call for {@code pushes}; those whose compare-and-set lost go in {@code lost}, and so do
     * those whose server is away (no call), while their window lasts: what they count is pushed
     * once it answers, not dropped for one late call.
     */
    private void push(List<Push> pushes, List<Push> lost) {
        long now = limiter.clock().epochNanos(); // per call: a pass may take several timeouts
        if (backend.link().away(pushes.get(0).key())) {
            for (Push p : pushes) {
                long end = algorithm.leaseUntil(pendingSince[p.slot()], limiter.budgetOf(p.slot(), p.fingerprint()));
                if (end == 0 || now < end) {
                    lost.add(p);
                } else {
                    pending[p.slot()] = 0; // its window is over: it matters to no later one
                }
            }
            return;
        }
        String[] keys = new String[pushes.size()];
        String[] args = new String[4 * pushes.size()];
        long[] next = new long[pushes.size()];
        for (int i = 0; i < pushes.size(); i++) {
            int s = pushes.get(i).slot();
            keys[i] = pushes.get(i).key();
            next[i] = algorithm.addToCurrent(known[s], limiter.budgetOf(s, pushes.get(i).fingerprint()), now, pending[s]);
            RedisKeys.casArguments(args, 4 * i, algorithm, limiter.policyOf(pushes.get(i).fingerprint()), known[s], next[i], now);
        }
        List<Object> replies = null;
        try {
            replies = backend.link().run(backend.casScript(), keys, args)
                    .get(backend.settings().redisTimeout().toMillis() * 2, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            // the link says when Redis goes away; these counts are dropped
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (replies != null && replies.size() < pushes.size()) {
            replies = null; // not the script's answer
        }
        for (int i = 0; i < pushes.size(); i++) {
            Push p = pushes.get(i);
            int s = p.slot();
            if (replies == null) {
                pending[s] = 0;
            } else if (replies.get(i) instanceof Long) {
                known[s] = next[i];
                pending[s] = 0;
                long fleet = next[i];
                table.replace(s, p.fingerprint(), local -> {
                    int since = counters.unsynced(s); // allowed by the loops after this pass took its counts
                    // counted at the clock's time now, not the call's: a window may have begun
                    // since, and these counts are the new window's (merged into the old one, they
                    // left the loops a fresh budget in the new)
                    return since == 0 ? fleet
                            : algorithm.addToCurrent(fleet, limiter.budget(s), limiter.clock().epochNanos(), since);
                });
            } else {
                known[s] = RedisKeys.word(replies.get(i));
                backend.conflicts().increment();
                lost.add(pushes.get(i));
            }
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
