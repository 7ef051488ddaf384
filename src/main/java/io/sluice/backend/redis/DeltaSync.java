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
    /** Domains per script call: bounds the time one call holds Redis. */
    private static final int MAX_DOMAINS_PER_CALL = 256;

    /** Per domain, this thread's view of the current window. */
    private static final class Synced {
        long window;
        /** What this instance added to the window's key. */
        long pushed;
        /** What the other instances had added, as already merged into the local count. */
        long merged;
    }

    private final RedisBackend backend;
    private final DomainLimiter limiter;
    private final Duration interval;
    private final ConcurrentLinkedQueue<SharedCounter> dirty = new ConcurrentLinkedQueue<>();
    private final Map<Counter, Synced> synced = new HashMap<>();
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
        Map<Integer, List<Counter>> bySlot = new HashMap<>();
        Map<Counter, Integer> deltas = new HashMap<>();
        SharedCounter c;
        while ((c = dirty.poll()) != null) {
            int d = c.takeUnsynced();
            // A counter can be queued again while this loop drains: count it once per call.
            if (d > 0 && deltas.merge(c, d, Integer::sum) == d) {
                String key = RedisKeys.key(c.cachedName(), RedisKeys.window(c, now));
                bySlot.computeIfAbsent(backend.link().slot(key), s -> new ArrayList<>()).add(c);
            }
        }
        for (List<Counter> group : bySlot.values()) {
            for (int from = 0; from < group.size(); from += MAX_DOMAINS_PER_CALL) {
                push(group.subList(from, Math.min(group.size(), from + MAX_DOMAINS_PER_CALL)), deltas, now);
            }
        }
        if (++passes % 100 == 0) {
            synced.entrySet().removeIf(e -> e.getValue().window != RedisKeys.window(e.getKey(), now));
        }
    }

    private void push(List<Counter> counters, Map<Counter, Integer> deltas, long now) {
        String[] keys = new String[counters.size()];
        String[] args = new String[1 + 2 * counters.size()];
        args[0] = "f";
        for (int i = 0; i < counters.size(); i++) {
            Counter c = counters.get(i);
            keys[i] = RedisKeys.key(c.cachedName(), RedisKeys.window(c, now));
            args[1 + 2 * i] = Integer.toString(deltas.get(c));
            args[2 + 2 * i] = RedisKeys.ttlMillis(c, false);
        }
        List<Object> totals;
        try {
            totals = backend.link().run(backend.addScript(), keys, args)
                    .get(backend.settings().redisTimeout().toMillis() * 2, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            return; // the link logs Redis going away; these counts are dropped
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        for (int i = 0; i < counters.size(); i++) {
            Counter c = counters.get(i);
            long window = RedisKeys.window(c, now);
            Synced s = synced.computeIfAbsent(c, k -> new Synced());
            if (s.window != window) {
                s.window = window;
                s.pushed = 0;
                s.merged = 0;
            }
            s.pushed += deltas.get(c);
            long others = Math.max(0, ((Number) totals.get(i)).longValue() - s.pushed);
            if (others > s.merged) {
                limiter.addElsewhere(c, others - s.merged);
                s.merged = others;
            }
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
