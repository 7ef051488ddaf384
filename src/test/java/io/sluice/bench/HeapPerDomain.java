package io.sluice.bench;

import io.sluice.config.LimitSettings;
import io.sluice.domain.DomainProbe;
import io.sluice.domain.RegistrableDomains;
import io.sluice.flood.Floods;
import io.sluice.limit.Clock;
import io.sluice.limit.Algorithm;
import io.sluice.limit.Decide;
import io.sluice.limit.DomainLimiter;
import io.sluice.limit.HeapCounters;
import io.sluice.limit.LimitRules;
import io.sluice.limit.Policy;
import io.sluice.limit.PolicyTable;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Map;

/**
 * Heap taken by the limiter per tracked domain, at a bound of N domains, flood detection on (the
 * default): used heap after a full GC before the limiter is made and after it tracks N domains of
 * the benchmark workload, each asked twice so that the table's last tenth, kept for domains asked
 * again, is full too; the table made at once for the bound counts as well. Run with
 * {@code scripts/jmh}'s classpath: {@code java -cp ... io.sluice.bench.HeapPerDomain 1000000}.
 */
public final class HeapPerDomain {
    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        RegistrableDomains psl = RegistrableDomains.fromGuava();
        track(psl, LimitSettings.Algorithm.FIXED_WINDOW, n); // a round whose once-only costs count for no algorithm
        for (LimitSettings.Algorithm a : LimitSettings.Algorithm.values()) {
            long before = usedAfterGc();
            DomainLimiter limiter = track(psl, a, n);
            long after = usedAfterGc();
            System.out.printf("%s: %d domains tracked, %.1f bytes of heap each%n", a, limiter.tracked(),
                    (after - before) / (double) limiter.tracked());
        }
    }

    private static DomainLimiter track(RegistrableDomains psl, LimitSettings.Algorithm a, int n) {
        DomainLimiter limiter = new DomainLimiter(Algorithm.of(a), new HeapCounters(),
                LimitRules.of(new PolicyTable(Policy.of(100, Duration.ofHours(1), 0), Map.of())), n, Clock.system());
        Floods.watch(limiter, new LimitSettings.Flood(true, 0.5, 20, 0.1, 0.8, java.util.List.of()));
        DomainProbe p = new DomainProbe();
        for (int pass = 0; pass < 2; pass++) { // the second fills the last tenth: domains asked again
            for (int d = 0; d < n; d++) {
                psl.reduce("www." + Workload.domain(d), p);
                Decide.refusedBy(limiter, p);
            }
        }
        return limiter;
    }

    private static long usedAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
