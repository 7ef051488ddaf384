package io.sluice.flood;

import io.sluice.config.LimitSettings;
import io.sluice.limit.Clock;
import io.sluice.limit.DomainLimiter;
import io.sluice.limit.FloodState;
import io.sluice.limit.LimitMeters;
import io.sluice.limit.Limits;
import io.sluice.limit.Policy;
import io.sluice.metrics.Registry;
import io.sluice.pipeline.AnswerSide;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Random-subdomain flood detection for the domains of one limiter: each counter counts the
 * upstream's answers for its domain in the domain's windows, and each window, once over, is
 * judged: enough answers ({@link #answersToJudge}: the budget pressed on, not a domain far under it)
 * of which at least nxdomain-ratio were NXDOMAIN, and not a domain named in exempt-domains, and the
 * slot's flood flag is set ({@link DomainLimiter#markFlooded}): the domain's budget becomes its cut
 * ({@link DomainLimiter#budget});
 * a window below the ratio, or more than {@link #MAX_GAP_WINDOWS} quiet ones, and it is whole
 * again. NXDOMAIN is the signal because random labels
 * do not exist: a victim's real names, answered by the cache or the upstream, are not.
 *
 * <p>The count is one 32-bit word per slot of the counter table, moved by compare-and-set (and
 * zeroed when the janitor empties the slot): bits 22-31 the window's number (modulo 2^10), bits
 * 11-21 the answers, bits 0-10 the NXDOMAINs. A window is judged on its first
 * {@link #COUNT_MAX} answers, and needs no more than that many of them: four bytes a slot where
 * eight kept larger counts no judgement needed (docs/benchmarks.md, "Heap per tracked domain"). A
 * domain kept tracked with no upstream answer for a multiple of 1,024 windows, give or take
 * {@link #MAX_GAP_WINDOWS} (17 minutes of 1 s windows; with every upstream down, say), has its
 * old window judged as if the gap were short, or added to, at the exact multiple: one verdict on
 * old answers. A counter idle for a window is retired and its count zeroed long before (a flooded
 * one once {@link #MAX_GAP_WINDOWS} windows passed without an answer: {@link #keeps}). The
 * loop whose CAS moves the word into a new window judges the window it ends, so each window is
 * judged exactly once, without a lock, whichever loops its answers came on; the slot's
 * flood flag moves by compare-and-set, so each change into or out of a
 * flood is made and logged once, and the cut is worked out from the policy in force by each
 * decision. What is logged is queued and written by the limits' janitor, never on a loop.
 */
public final class Floods implements FloodState {
    private static final Logger log = LoggerFactory.getLogger(Floods.class);
    private static final int COUNT_BITS = 11;
    /** Answers a window counts: the first 2,047 judge it, and min-answers asks at most that many. */
    private static final int COUNT_MAX = (1 << COUNT_BITS) - 1;
    private static final int WINDOW_SHIFT = 2 * COUNT_BITS;
    private static final int WINDOW_MASK = (1 << (32 - WINDOW_SHIFT)) - 1;
    private static final int MAX_QUEUED = 1_000;
    /**
     * How many windows may pass between a window's answers and the next answer for the window to
     * be judged still: a flood that pauses every other window is judged on its answers; past
     * this, the domain was quiet, and a flood of it is over.
     */
    private static final long MAX_GAP_WINDOWS = 8;

    /** What an answer changed. */
    public enum Change { NONE, ENTERED, LEFT }

    private static final VarHandle WATCH = MethodHandles.arrayElementVarHandle(int[].class);

    private final Clock clock;
    /** Per slot of the counter table, what its domain's current window was answered. */
    private final int[] watch;
    /** The names of the domains flooded now, for the line that says a flood ended with its counter. */
    private final Map<Long, String> floodedNames = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<String> lines = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queued = new AtomicInteger();

    Floods(Clock clock, int slots) {
        this.clock = clock;
        this.watch = new int[slots + 1];
    }

    /**
     * Starts watching the domains of {@code limits} for floods, under {@code limits.flood}, with
     * its gauge in {@code meters}; before traffic. Null when detection is off or nothing is limited.
     */
    public static Floods watch(Limits limits, Registry meters) {
        if (!limits.active() || !limits.settings().flood().detect()) {
            return null;
        }
        Floods floods = watch(limits.limiter(), limits.settings().flood());
        meters.gauge("flooded_domains", "Domains whose budget is cut now: their upstream answers are mostly NXDOMAIN.",
                limits.limiter()::floodedDomains);
        return floods;
    }

    /** Starts watching the domains of {@code limiter} for floods under {@code settings}; before traffic. */
    public static Floods watch(DomainLimiter limiter, LimitSettings.Flood settings) {
        Floods floods = new Floods(limiter.clock(), limiter.table().capacity());
        limiter.watchFloods(settings, floods);
        return floods;
    }

    /** A loop's feed of this: the limit stage's answer side. */
    public AnswerSide watcher(Limits limits, LimitMeters meters) {
        return new FloodWatch(limits, this, meters.floodsDetected());
    }

    /**
     * Counts one upstream answer for the domain whose counter is {@code slot} of {@code limiter};
     * judges the window it ends, if any. A window followed by more than {@link #MAX_GAP_WINDOWS}
     * quiet ones is not: the domain was quiet, and a flood of it is over. {@code name} gives the
     * domain's name, asked only for the line a change writes.
     */
    public Change answered(DomainLimiter limiter, int slot, Supplier<String> name, boolean nxdomain) {
        Policy p = limiter.policy(slot);
        long fp = limiter.fingerprint(slot);
        if (p == Policy.UNLIMITED) {
            if (limiter.markFlooded(slot, fp, false)) {
                floodedNames.remove(fp); // made unlimited as it entered a flood: nothing to cut
            }
            return Change.NONE;
        }
        int window = (int) (clock.epochNanos() / p.windowNanos()) & WINDOW_MASK;
        while (true) {
            int w = (int) WATCH.getVolatile(watch, slot);
            int answers = (w >>> COUNT_BITS) & COUNT_MAX;
            int nx = w & COUNT_MAX;
            boolean ends = (w >>> WINDOW_SHIFT) != window;
            int next;
            if (ends) {
                next = window << WINDOW_SHIFT | 1 << COUNT_BITS | (nxdomain ? 1 : 0);
            } else if (answers == COUNT_MAX) {
                return Change.NONE;
            } else {
                next = w + (1 << COUNT_BITS) + (nxdomain ? 1 : 0);
            }
            if (WATCH.compareAndSet(watch, slot, w, next)) {
                if (!ends || answers == 0) {
                    return Change.NONE;
                }
                int gap = (window - (w >>> WINDOW_SHIFT)) & WINDOW_MASK;
                return gap <= MAX_GAP_WINDOWS ? judge(limiter, slot, fp, name, p, answers, nx)
                        : judge(limiter, slot, fp, name, p, 0, 0);
            }
        }
    }

    /** Judges a window of {@code answers}, {@code nx} of them NXDOMAIN (none: quiet windows passed). */
    private Change judge(DomainLimiter limiter, int slot, long fp, Supplier<String> domain, Policy p, long answers,
                         long nx) {
        LimitSettings.Flood settings = limiter.rules().flood(); // one reading for the whole judgement
        boolean mostlyNx = answers > 0 && nx >= settings.nxdomainRatio() * answers;
        boolean was = limiter.flooded(slot);
        if (!was && mostlyNx && answers >= answersToJudge(settings, p)) {
            // The line is made before the flag moves, so that nothing can throw between a cut and its line.
            String name = domain.get();
            if (settings.exempts(name)) {
                return Change.NONE; // named by the operator: its NXDOMAINs are its normal answers
            }
            String line = name + ": random-subdomain flood: " + nx + " of " + answers + " upstream answers in a"
                    + " window were NXDOMAIN; its budget for cache misses is " + DomainLimiter.cut(p, settings) + " (was " + p
                    + ") until they fall below " + Math.round(settings.nxdomainRatio() * 100) + "%";
            if (!limiter.markFlooded(slot, fp, true)) {
                return Change.NONE;
            }
            floodedNames.put(fp, name);
            note(line);
            return Change.ENTERED;
        }
        String exempted = was && mostlyNx ? domain.get() : null; // a flooded domain named since, by a reload
        if (was && (!mostlyNx || settings.exempts(exempted))) {
            String line = (exempted != null ? exempted : domain.get()) + ": flood over: " + (exempted != null
                    ? "named in limits.flood.exempt-domains" : answers == 0 ? "quiet for more than " + MAX_GAP_WINDOWS
                    + " windows" : nx + " of " + answers + " upstream answers in a window were NXDOMAIN")
                    + "; its budget is " + p + " again";
            if (!limiter.markFlooded(slot, fp, false)) {
                return Change.NONE;
            }
            floodedNames.remove(fp);
            note(line);
            return Change.LEFT;
        }
        return Change.NONE;
    }

    /**
     * The answers a window needs before its domain is judged: min-answers (or the budget, if
     * smaller), and the pressure's share of the budget. Under that share the domain's misses fit its
     * budget with room to spare, and a cut would buy the upstream nothing: it would only refuse a
     * DNSBL's or a search list's lookups, whose normal answer is NXDOMAIN. A flood is held to the
     * budget by the limit itself, so its answers reach the budget, and the share, in its first window.
     * At most 2,047, the answers a window counts.
     */
    static long answersToJudge(LimitSettings.Flood settings, Policy p) {
        long floor = Math.min(settings.minAnswers(), p.queries());
        long pressing = (long) Math.ceil(settings.pressure() * p.queries());
        return Math.min(Math.max(floor, pressing), COUNT_MAX);
    }

    /** Kept while a window of its last answers is judged still ({@link #MAX_GAP_WINDOWS}): an attack that pauses stays cut. */
    @Override
    public boolean keeps(int slot, Policy p, long now) {
        int w = (int) WATCH.getVolatile(watch, slot);
        int window = (int) (now / p.windowNanos()) & WINDOW_MASK;
        return ((window - (w >>> WINDOW_SHIFT)) & WINDOW_MASK) <= MAX_GAP_WINDOWS;
    }

    @Override
    public void forgotten(long fingerprint) {
        String name = floodedNames.remove(fingerprint);
        note((name != null ? name : "a domain") + ": flood over: no answers for more than " + MAX_GAP_WINDOWS + " windows; its counter is gone");
    }

    @Override
    public void emptied(int slot, long fingerprint) {
        WATCH.setVolatile(watch, slot, 0);
        floodedNames.remove(fingerprint); // flooded as the slot was retired: no line for it
    }

    @Override
    public void cleared(long fingerprint) {
        floodedNames.remove(fingerprint);
    }

    private void note(String line) {
        if (queued.incrementAndGet() > MAX_QUEUED) {
            queued.decrementAndGet();
            return;
        }
        lines.offer(line);
    }

    @Override
    public void drain(String prefix) {
        String line;
        while ((line = lines.poll()) != null) {
            queued.decrementAndGet();
            log.warn("{}{}", prefix, line);
        }
    }
}
