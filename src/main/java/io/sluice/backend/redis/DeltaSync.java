package io.sluice.backend.redis;

import io.sluice.limit.Algorithm;
import io.sluice.limit.DomainLimiter;
import io.sluice.limit.HeapCounters;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.LoggerFactory;

/**
 * Redis async mode: the event loops decide with the in-process words, and this thread, every sync
 * interval, adds what each domain allowed here since the last pass to the domain's word in Redis
 * (the algorithm's {@link Algorithm#addToCurrent}, set by compare-and-set) and makes the result,
 * plus what the loops allowed meanwhile, the local word: each instance soon decides on the
 * fleet's count.
 *
 * <p>Only domains that allowed a query here since the last pass are synced. A compare-and-set that
 * loses (another instance wrote the word) is worked out again from the word Redis returned, up to
 * {@link #TRIES} times in a pass, then waits for the next pass. A failed call drops its counts:
 * they belong to windows Redis may not see again, and dropping errs toward answering.
 */
final class DeltaSync implements AutoCloseable {
    private static final int TRIES = 3;

    /** One domain's push in a pass. */
    private record Push(SyncedCounter counter, String key, int slot) {
    }

    private final RedisBackend backend;
    private final DomainLimiter limiter;
    private final Algorithm algorithm;
    private final SyncedCounters counters;
    private final Duration interval;
    /** Domains whose counts lost every try of the last pass: they go first in the next. */
    private List<Push> carried = new ArrayList<>();
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sluice-redis-sync");
        t.setDaemon(true);
        return t;
    });

    DeltaSync(RedisBackend backend, DomainLimiter limiter, SyncedCounters counters, Duration interval) {
        this.backend = backend;
        this.limiter = limiter;
        this.algorithm = limiter.algorithm();
        this.counters = counters;
        this.interval = interval;
    }

    void start() {
        long ms = interval.toMillis();
        thread.scheduleWithFixedDelay(() -> {
            try {
                pass();
            } catch (RuntimeException e) {
                // a thrown task would never run again; the next pass tries afresh
                LoggerFactory.getLogger(DeltaSync.class).warn("redis sync: {}", e.toString());
            }
        }, ms, ms, TimeUnit.MILLISECONDS);
    }

    private void pass() {
        List<Push> due = carried;
        carried = new ArrayList<>();
        Set<SyncedCounter> inPass = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Push p : due) {
            inPass.add(p.counter());
        }
        SyncedCounter c;
        while ((c = counters.dirty.poll()) != null) {
            int d = c.takeUnsynced();
            if (d == 0) {
                continue;
            }
            c.pending += d;
            if (inPass.add(c)) { // a carried counter, or one queued again while this loop drains: once per pass
                String key = RedisKeys.key(c, backend.algorithmName());
                due.add(new Push(c, key, backend.link().slot(key)));
            }
        }
        for (int t = 0; t < TRIES && !due.isEmpty(); t++) {
            List<Push> lost = new ArrayList<>();
            for (List<Push> call : backend.link().calls(due, Push::slot)) {
                push(call, lost);
            }
            due = lost;
        }
        carried = due;
    }

    /** One call for {@code pushes}; those whose compare-and-set lost go in {@code lost}. */
    private void push(List<Push> pushes, List<Push> lost) {
        long now = limiter.clock().epochNanos(); // per call: a pass may take several timeouts
        String[] keys = new String[pushes.size()];
        String[] args = new String[4 * pushes.size()];
        long[] next = new long[pushes.size()];
        for (int i = 0; i < pushes.size(); i++) {
            SyncedCounter c = pushes.get(i).counter();
            keys[i] = pushes.get(i).key();
            next[i] = algorithm.addToCurrent(c.known, c.budget(), now, c.pending);
            RedisKeys.casArguments(args, 4 * i, algorithm, c, c.known, next[i], now);
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
            SyncedCounter c = pushes.get(i).counter();
            if (replies == null) {
                c.pending = 0;
            } else if (replies.get(i) instanceof Long) {
                c.known = next[i];
                c.pending = 0;
                long fleet = next[i];
                HeapCounters.replace(c, local -> {
                    int since = c.unsynced(); // allowed by the loops after this pass took its counts
                    return since == 0 ? fleet : algorithm.addToCurrent(fleet, c.budget(), now, since);
                });
            } else {
                c.known = RedisKeys.word(replies.get(i));
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
