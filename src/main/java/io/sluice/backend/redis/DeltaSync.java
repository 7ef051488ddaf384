package io.sluice.backend.redis;

import io.sluice.limit.Counter;
import io.sluice.limit.DomainLimiter;
import io.sluice.limit.SharedCounter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.slf4j.LoggerFactory;

/**
 * Redis async mode: the event loops decide with the in-process counters, and this thread, every
 * sync interval, adds what each domain allowed here since the last pass to its Redis key and reads
 * back the fleet's total; what the other instances allowed is then added to the local count, so
 * each instance soon decides on the fleet's count.
 *
 * <p>Only domains that allowed a query here since the last pass are synced (the limiter queues
 * a counter once when its first unsynced query is allowed). A failed pass drops its counts: they
 * belong to windows Redis may not see again, and dropping errs toward answering.
 */
final class DeltaSync implements AutoCloseable {
    /** Per domain, this thread's view of the current window, and its key made once per window. */
    private final class Synced {
        final SharedCounter counter;
        long window = Long.MIN_VALUE;
        String key;
        String ttl;
        int slot;
        /** Allowed here since the last push, to go in this pass. */
        int pending;
        /** What this instance added to the window's key. */
        long pushed;
        /** What the other instances had added, as already merged into the local count. */
        long merged;

        Synced(SharedCounter counter) {
            this.counter = counter;
        }

        /** Moves to the window of {@code now}: a new key, nothing pushed or merged yet. */
        void roll(long now) {
            long w = RedisKeys.window(counter, now);
            if (w != window) {
                window = w;
                key = RedisKeys.key(counter.cachedName(), w);
                ttl = RedisKeys.ttlMillis(counter, false);
                slot = backend.link().slot(key);
                pushed = 0;
                merged = 0;
            }
        }
    }

    private final RedisBackend backend;
    private final DomainLimiter limiter;
    private final Duration interval;
    private final ConcurrentLinkedQueue<SharedCounter> dirty = new ConcurrentLinkedQueue<>();
    private final Map<Counter, Synced> synced = new HashMap<>();
    private final Function<Counter, Synced> newSynced = c -> new Synced((SharedCounter) c);
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sluice-redis-sync");
        t.setDaemon(true);
        return t;
    });
    private long passes;

    DeltaSync(RedisBackend backend, DomainLimiter limiter, Duration interval) {
        this.backend = backend;
        this.limiter = limiter;
        this.interval = interval;
        limiter.countUnsynced(dirty);
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
        long now = limiter.clock().epochNanos();
        List<Synced> due = new ArrayList<>();
        SharedCounter c;
        while ((c = dirty.poll()) != null) {
            int d = c.takeUnsynced();
            if (d == 0) {
                continue;
            }
            Synced s = synced.computeIfAbsent(c, newSynced);
            s.roll(now);
            if (s.pending == 0) { // a counter can be queued again while this loop drains: once per call
                due.add(s);
            }
            s.pending += d;
        }
        for (List<Synced> call : backend.link().calls(due, s -> s.slot)) {
            push(call);
        }
        if (++passes % 100 == 0) {
            synced.values().removeIf(s -> s.window != RedisKeys.window(s.counter, now));
        }
    }

    private void push(List<Synced> domains) {
        String[] keys = new String[domains.size()];
        String[] args = new String[1 + 2 * domains.size()];
        args[0] = "f";
        for (int i = 0; i < domains.size(); i++) {
            Synced s = domains.get(i);
            keys[i] = s.key;
            args[1 + 2 * i] = Integer.toString(s.pending);
            args[2 + 2 * i] = s.ttl;
        }
        List<Object> totals = null;
        try {
            totals = backend.link().run(backend.addScript(), keys, args)
                    .get(backend.settings().redisTimeout().toMillis() * 2, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            // the link says when Redis goes away; these counts are dropped
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (int i = 0; i < domains.size(); i++) {
            Synced s = domains.get(i);
            int pending = s.pending;
            s.pending = 0;
            if (totals == null) {
                continue;
            }
            s.pushed += pending;
            long others = Math.max(0, ((Number) totals.get(i)).longValue() - s.pushed);
            if (others > s.merged) {
                limiter.addElsewhere(s.counter, others - s.merged);
                s.merged = others;
            }
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
