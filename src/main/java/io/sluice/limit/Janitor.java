package io.sluice.limit;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The limiter's background thread: removes counters whose windows have ended, says once when the
 * table fills and once when it has room again, and writes the refusal log. Never on an event loop;
 * queries do not wait for it.
 */
public final class Janitor implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Janitor.class);
    private static final long LOG_INTERVAL_MILLIS = 1000;
    /**
     * How long a retired counter keeps its slot before it is emptied for another domain: far
     * longer than a decision holds a slot ({@link CounterTable}), short enough that a pass which
     * retired most of the table gives the room back before a flood of new domains needs it (a
     * quarter second of 140,000 new domains a second, 35,000, is 7% of the slots a full bound leaves).
     */
    static final Duration GRACE = Duration.ofMillis(250);

    private final DomainLimiter limiter;
    private final Budgets budgets;
    private final BooleanSupplier dryRun;
    private final int maxDomains;
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(
            new ThreadFactoryBuilder().setNameFormat("sluice-janitor").setDaemon(true).build());
    private long overflowSeen;
    private boolean overflowing;

    Janitor(DomainLimiter limiter, Budgets budgets, BooleanSupplier dryRun, int maxDomains) {
        this.limiter = limiter;
        this.budgets = budgets;
        this.dryRun = dryRun;
        this.maxDomains = maxDomains;
    }

    public void start(Duration interval) {
        long grace = Math.min(GRACE.toMillis(), interval.toMillis() / 2);
        thread.schedule(() -> pass(interval.toMillis(), grace), interval.toMillis(), TimeUnit.MILLISECONDS);
        thread.scheduleWithFixedDelay(() -> {
            limiter.refusals().drain(dryRun.getAsBoolean() ? "dry run, would refuse" : "limiting");
            FloodState floods = limiter.floods();
            if (floods != null) {
                floods.drain(dryRun.getAsBoolean() ? "dry run, nothing refused: " : "");
            }
        }, LOG_INTERVAL_MILLIS, LOG_INTERVAL_MILLIS, TimeUnit.MILLISECONDS);
    }

    /**
     * A pass, then a grace, then emptying what it retired, then the next pass an interval after
     * this one: chained, so that no pass runs between a pass and its emptying.
     */
    private void pass(long intervalMillis, long graceMillis) {
        try {
            sweep();
        } finally {
            thread.schedule(() -> {
                try {
                    limiter.emptyRetired();
                } finally {
                    thread.schedule(() -> pass(intervalMillis, graceMillis), intervalMillis - graceMillis,
                            TimeUnit.MILLISECONDS);
                }
            }, graceMillis, TimeUnit.MILLISECONDS);
        }
    }

    /** Expires runtime budgets, retires idle counters, then reports overflow changes. */
    private void sweep() {
        for (Budgets.Runtime r : budgets == null ? List.<Budgets.Runtime>of() : budgets.expire()) {
            log.info("runtime limit of {} ({}) expired: back to {}", r.domain(), r.limit(),
                    budgets.effective(r.domain()));
        }
        int removed;
        try {
            removed = limiter.evictIdle();
        } catch (RuntimeException e) {
            // A store outside the process may fail; the next pass tries again (a thrown task would
            // never run again).
            log.warn("janitor: {}", e.toString());
            return;
        }
        long hits = limiter.overflowHits.sum();
        if (hits > overflowSeen && !overflowing) {
            overflowing = true;
            log.warn("counter table full ({} domains): new domains share one overflow counter until room frees up",
                    maxDomains);
        } else if (hits == overflowSeen && overflowing) {
            overflowing = false;
            log.info("counter table has room again ({} of {} domains tracked); overflow ended",
                    limiter.tracked(), maxDomains);
        }
        overflowSeen = hits;
        if (removed > 0) {
            log.debug("janitor removed {} counters of ended windows", removed);
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
