package io.sluice.metrics;

import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * A latency histogram with fixed buckets, recorded from the event loops: one bucket's
 * {@link LongAdder} and the sum's per observation, summed into a Prometheus histogram at scrape.
 */
public final class LatencyHistogram {
    /** Upper bounds in seconds: a loopback upstream answers in tens of microseconds, a far one in tens of milliseconds. */
    static final double[] BOUNDS = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
        1, 2.5, 5, Double.POSITIVE_INFINITY};
    private static final long[] BOUNDS_NANOS = new long[BOUNDS.length];

    static {
        for (int i = 0; i < BOUNDS.length; i++) {
            BOUNDS_NANOS[i] = Double.isInfinite(BOUNDS[i]) ? Long.MAX_VALUE : (long) (BOUNDS[i] * 1e9);
        }
    }

    final String name;
    final String help;
    private final Labels labels;
    private final LongAdder[] buckets = new LongAdder[BOUNDS.length];
    private final LongAdder sumNanos = new LongAdder();

    LatencyHistogram(String name, String help, Labels labels) {
        this.name = name;
        this.help = help;
        this.labels = labels;
        for (int i = 0; i < buckets.length; i++) {
            buckets[i] = new LongAdder();
        }
    }

    /** Records one latency. */
    public void observeNanos(long nanos) {
        int i = 0;
        while (nanos > BOUNDS_NANOS[i]) {
            i++;
        }
        buckets[i].increment();
        sumNanos.add(nanos);
    }

    /** Observations so far. */
    public long count() {
        long n = 0;
        for (LongAdder b : buckets) {
            n += b.sum();
        }
        return n;
    }

    /** The sum of the observations so far, in seconds. */
    public double sumSeconds() {
        return sumNanos.sum() / 1e9;
    }

    static HistogramSnapshot snapshot(String fullName, List<LatencyHistogram> children) {
        HistogramSnapshot.Builder b = HistogramSnapshot.builder().name(fullName).help(children.get(0).help);
        for (LatencyHistogram h : children) {
            long[] counts = new long[BOUNDS.length];
            for (int i = 0; i < counts.length; i++) {
                counts[i] = h.buckets[i].sum();
            }
            b.dataPoint(HistogramSnapshot.HistogramDataPointSnapshot.builder()
                    .labels(h.labels)
                    .classicHistogramBuckets(ClassicHistogramBuckets.of(BOUNDS, counts))
                    .sum(h.sumNanos.sum() / 1e9)
                    .build());
        }
        return b.build();
    }
}
