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
 *
 * <p>The table keeps no names, so an entry takes the domain's name from the query when queued,
 * and which domains were queued in their current window is kept by fingerprint in a lossy table
 * (512 KB): two domains sharing an entry of it may each be listed twice in a window, never
 * missed. Past about 65,000 domains refused at once, most refusals reach the bounded queue, and
 * the count of those left unlisted is of refusals, not domains.
 */
final class RefusalLog {
    private static final Logger log = LoggerFactory.getLogger(RefusalLog.class);
    private static final int MAX_QUEUED = 10_000;
    private static final int MAX_LINES_PER_DRAIN = 20;
    private static final int LOGGED_SIZE = 1 << 16;

    private record Entry(String name, String budget) {
    }

    private final ConcurrentLinkedQueue<Entry> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queued = new AtomicInteger();
    private final LongAdder unlisted = new LongAdder();
    /** Per entry, a mix of the fingerprint and the window last queued; racy, which is harmless. */
    private final long[] logged = new long[LOGGED_SIZE];

    /**
     * Queues a line for the domain with {@code fingerprint}, once per {@code window}; the texts of
     * {@code name} and the budget (its flood cut when {@code cut}) are made only then.
     */
    void note(long fingerprint, Object name, Policy budget, boolean cut, long window) {
        int i = (int) (fingerprint >>> 3) & (LOGGED_SIZE - 1);
        long tag = fingerprint ^ (window * 0x9E3779B97F4A7C15L);
        if (logged[i] == tag) {
            return;
        }
        logged[i] = tag;
        if (queued.incrementAndGet() > MAX_QUEUED) {
            queued.decrementAndGet();
            unlisted.increment();
            return;
        }
        queue.offer(new Entry(name.toString(), cut ? DomainLimiter.cutText(budget) : budget.toString()));
    }

    void drain(String verb) {
        int lines = 0;
        Entry e;
        while ((e = queue.poll()) != null) {
            queued.decrementAndGet();
            if (lines++ < MAX_LINES_PER_DRAIN) {
                log.warn("{} {}: over {}", verb, e.name(), e.budget());
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
