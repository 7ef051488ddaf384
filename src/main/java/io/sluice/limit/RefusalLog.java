package io.sluice.limit;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which domains went over their budget, for the log: at most one entry per domain per window is
 * queued by the event loops (a lock-free offer), and the {@link Janitor} writes them out, a bounded
 * number of lines per second with a count of the rest. Nothing is logged on an event loop.
 */
final class RefusalLog {
    private static final Logger log = LoggerFactory.getLogger(RefusalLog.class);
    private static final int MAX_QUEUED = 10_000;
    private static final int MAX_LINES_PER_DRAIN = 20;

    private final ConcurrentLinkedQueue<Counter> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queued = new AtomicInteger();
    private final LongAdder unlisted = new LongAdder();

    void note(Counter c, long now) {
        long window = now / c.policy.windowNanos();
        if (c.loggedWindow == window) {
            return;
        }
        c.loggedWindow = window; // racy: two loops may both queue it once, which is harmless
        if (queued.incrementAndGet() > MAX_QUEUED) {
            queued.decrementAndGet();
            unlisted.increment();
            return;
        }
        queue.offer(c);
    }

    void drain(String verb) {
        int lines = 0;
        Counter c;
        while ((c = queue.poll()) != null) {
            queued.decrementAndGet();
            if (lines++ < MAX_LINES_PER_DRAIN) {
                log.warn("{} {}: over {}", verb, c.name(), c.budgetText());
            } else {
                unlisted.increment();
            }
        }
        long more = unlisted.sumThenReset();
        if (more > 0) {
            log.warn("{} {} more domains over their limits", verb, more);
        }
    }
}
