package io.sluice.limit;

import io.sluice.config.LimitSettings;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Random-subdomain flood detection for the domains of one limiter: each counter counts the
 * upstream's answers for its domain in the domain's windows, and each window, once over, is
 * judged: enough answers (min-answers, or the whole budget if smaller) of which at least
 * nxdomain-ratio were NXDOMAIN, and the domain's budget becomes its cut ({@link Counter#budget});
 * a window below the ratio, or more than {@link #MAX_GAP_WINDOWS} quiet ones, and it is whole
 * again. NXDOMAIN is the signal because random labels
 * do not exist: a victim's real names, answered by the cache or the upstream, are not.
 *
 * <p>The count is one word per counter, moved by compare-and-set: bits 40-63 the window's number
 * (modulo 2^24), bits 20-39 the answers, bits 0-19 the NXDOMAINs (each stops at 2^20 - 1). The
 * loop whose CAS moves the word into a new window judges the window it ends, so each window is
 * judged exactly once, without a lock, whichever loops its answers came on; the cut itself moves
 * by compare-and-set, so each change into or out of a flood is made and logged once. What is
 * logged is queued and written by the {@link Janitor}, never on a loop.
 */
public final class Floods {
    private static final Logger log = LoggerFactory.getLogger(Floods.class);
    private static final int COUNT_BITS = 20;
    private static final long COUNT_MAX = (1L << COUNT_BITS) - 1;
    private static final int WINDOW_SHIFT = 2 * COUNT_BITS;
    private static final long WINDOW_MASK = (1L << (64 - WINDOW_SHIFT)) - 1;
    private static final int MAX_QUEUED = 1_000;
    /**
     * How many windows may pass between a window's answers and the next answer for the window to
     * be judged still: a flood that pauses every other window is judged on its answers; past
     * this, the domain was quiet, and a flood of it is over.
     */
    private static final long MAX_GAP_WINDOWS = 8;

    /** What an answer changed. */
    enum Change { NONE, ENTERED, LEFT }

    /** Replaced whole by a reload ({@link #settings(LimitSettings.Flood)}), off the loops. */
    private volatile LimitSettings.Flood settings;
    private final Clock clock;
    private final ConcurrentLinkedQueue<String> lines = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queued = new AtomicInteger();

    Floods(LimitSettings.Flood settings, Clock clock) {
        this.settings = settings;
        this.clock = clock;
    }

    /**
     * Counts one upstream answer for {@code c}'s domain; judges the window it ends, if any. A
     * window followed by more than {@link #MAX_GAP_WINDOWS} quiet ones is not: the domain was
     * quiet, and a flood of it is over.
     */
    Change answered(Counter c, boolean nxdomain) {
        Policy p = c.policy;
        if (p == Policy.UNLIMITED) {
            Policy was = c.floodBudget();
            if (was != null) {
                c.swapFloodBudget(was, null); // made unlimited as it entered a flood: nothing to cut
            }
            return Change.NONE;
        }
        long window = (clock.epochNanos() / p.windowNanos()) & WINDOW_MASK;
        while (true) {
            long w = c.floodWatch();
            long answers = (w >>> COUNT_BITS) & COUNT_MAX;
            long nx = w & COUNT_MAX;
            boolean ends = (w >>> WINDOW_SHIFT) != window;
            long next;
            if (ends) {
                next = window << WINDOW_SHIFT | 1L << COUNT_BITS | (nxdomain ? 1 : 0);
            } else if (answers == COUNT_MAX) {
                return Change.NONE;
            } else {
                next = w + (1L << COUNT_BITS) + (nxdomain ? 1 : 0);
            }
            if (c.compareAndSetFloodWatch(w, next)) {
                if (!ends || answers == 0) {
                    return Change.NONE;
                }
                long gap = (window - (w >>> WINDOW_SHIFT)) & WINDOW_MASK;
                return gap <= MAX_GAP_WINDOWS ? judge(c, p, answers, nx) : judge(c, p, 0, 0);
            }
        }
    }

    /** Judges a window of {@code answers}, {@code nx} of them NXDOMAIN (none: quiet windows passed). */
    private Change judge(Counter c, Policy p, long answers, long nx) {
        LimitSettings.Flood settings = this.settings; // one reading for the whole judgement
        boolean mostlyNx = answers > 0 && nx >= settings.nxdomainRatio() * answers;
        Policy was = c.floodBudget();
        if (was == null && mostlyNx && answers >= Math.min(settings.minAnswers(), p.queries())) {
            Policy cut = cut(p, settings);
            if (!c.swapFloodBudget(null, cut)) {
                return Change.NONE;
            }
            Policy now = c.policy;
            LimitSettings.Flood latest = this.settings;
            if (now != p || latest != settings) { // changed while this was judged (a reload's walk may have passed c)
                c.swapFloodBudget(cut, now == Policy.UNLIMITED ? null : cut(now, latest));
            }
            note(c.cachedName() + ": random-subdomain flood: " + nx + " of " + answers + " upstream answers in a"
                    + " window were NXDOMAIN; its budget for cache misses is " + cut + " (was " + p
                    + ") until they fall below " + Math.round(settings.nxdomainRatio() * 100) + "%");
            return Change.ENTERED;
        }
        if (was != null && !mostlyNx) {
            if (!c.swapFloodBudget(was, null)) {
                return Change.NONE;
            }
            note(c.cachedName() + ": flood over: " + (answers == 0 ? "quiet for more than " + MAX_GAP_WINDOWS + " windows"
                    : nx + " of " + answers + " upstream answers in a window were NXDOMAIN")
                    + "; its budget is " + p + " again");
            return Change.LEFT;
        }
        return Change.NONE;
    }

    /**
     * Puts {@code next} in force (a reload): windows are judged by it from now on, and each
     * flooded counter of {@code limiter} gets its new cut. Off the loops.
     */
    void settings(LimitSettings.Flood next, DomainLimiter limiter) {
        settings = next;
        limiter.forEachCounter(c -> repolicy(c, c.policy));
    }

    /** What a flooded domain with policy {@code p} gets. */
    Policy cut(Policy p) {
        return cut(p, settings);
    }

    private static Policy cut(Policy p, LimitSettings.Flood settings) {
        return p.scaled(settings.fraction());
    }

    /** A flooded {@code c} gets the cut of its new policy {@code p}; off the loops. */
    void repolicy(Counter c, Policy p) {
        Policy was = c.floodBudget();
        if (was != null) {
            c.swapFloodBudget(was, p == Policy.UNLIMITED ? null : cut(p));
        }
    }

    /** {@code c} left the table: if it was flooded, nothing asked for it for a window. */
    void forgotten(Counter c) {
        Policy was = c.floodBudget();
        if (was != null && c.swapFloodBudget(was, null)) {
            note(c.cachedName() + ": flood over: no queries for a window; its counter is gone");
        }
    }

    private void note(String line) {
        if (queued.incrementAndGet() > MAX_QUEUED) {
            queued.decrementAndGet();
            return;
        }
        lines.offer(line);
    }

    /** Writes what was noted, each line after {@code prefix}; on the janitor's thread. */
    void drain(String prefix) {
        String line;
        while ((line = lines.poll()) != null) {
            queued.decrementAndGet();
            log.warn("{}{}", prefix, line);
        }
    }
}
