package io.sluice.bench;

import io.sluice.config.LimitSettings;
import io.sluice.domain.DomainProbe;
import io.sluice.domain.RegistrableDomains;
import io.sluice.limit.Clock;
import io.sluice.limit.Algorithm;
import io.sluice.limit.Decide;
import io.sluice.limit.DomainLimiter;
import io.sluice.limit.HeapCounters;
import io.sluice.limit.Policy;
import io.sluice.limit.PolicyTable;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Map;

/**
 * Heap taken by the limiter's table per tracked domain: used heap after a full GC, before and
 * after tracking N domains of the benchmark workload. Run with {@code scripts/jmh}'s classpath:
 * {@code java -cp ... io.sluice.bench.HeapPerDomain 1000000}.
 */
public final class HeapPerDomain {
    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        RegistrableDomains psl = RegistrableDomains.fromGuava();
        for (LimitSettings.Algorithm a : LimitSettings.Algorithm.values()) {
            DomainLimiter limiter = new DomainLimiter(Algorithm.of(a), new HeapCounters(),
                    new PolicyTable(Policy.of(100, Duration.ofHours(1), 0), Map.of()), n, Clock.system());
            long before = usedAfterGc();
            DomainProbe p = new DomainProbe();
            for (int d = 0; d < n; d++) {
                psl.reduce("www." + Workload.domain(d), p);
                Decide.refusedBy(limiter, p);
            }
            long after = usedAfterGc();
            System.out.printf("%s: %d domains tracked, %.1f bytes of heap each%n", a, limiter.tracked(),
                    (after - before) / (double) limiter.tracked());
        }
    }

    private static long usedAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
