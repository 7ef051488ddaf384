package io.sluice.metrics;

import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Every counter, gauge and histogram sluice keeps, by family name, in the order they were
 * declared. Each package declares its own where it counts (forward's {@code ForwardMeters}, the
 * listeners', the stages'); a counter asked for twice by name and labels is the same counter, so
 * the event loops' instances of one stage share it. Counters are {@link LongAdder}s, whose cells
 * keep loops from contending on one cache line; reading a total is the rare operation (a scrape,
 * the stop line), and {@link #snapshot} turns them into the Prometheus client's snapshots then.
 * Declaring happens at start, never on a loop.
 *
 * <p>The Prometheus client's own counters would do as well on the loops only with exemplars
 * off and each labelled child looked up once; keeping the adders here keeps the hot path's
 * increments exactly what they were and lets the client do what it is for: the model, the
 * exposition formats, the JVM's metrics and the HTTP exporter.
 */
public final class Registry {
    /** One family: a name (without {@code sluice_} and {@code _total}), its help, and its children by labels. */
    private static final class Family {
        final String help;
        final boolean counter;
        final Map<Labels, LongAdder> adders = new LinkedHashMap<>();
        final Map<Labels, LongSupplier> values = new LinkedHashMap<>();
        /** For a gauge whose label sets change between scrapes (the busiest domains); else null. */
        Supplier<Map<Labels, Long>> dynamic;
        /** What a counter's removed series had counted: its total since start never goes back. */
        long removed;
        /** A gauge of nanoseconds exposed in seconds, whose negative values mean "none yet" and are left out. */
        boolean nanosAsSeconds;

        Family(String help, boolean counter) {
            this.help = help;
            this.counter = counter;
        }

        long sum() {
            long s = counter ? removed : 0;
            for (LongSupplier v : values.values()) {
                s += v.getAsLong();
            }
            return s;
        }
    }

    private final Map<String, Family> families = new LinkedHashMap<>();
    private final Map<String, Map<Labels, LatencyHistogram>> histograms = new LinkedHashMap<>();

    /**
     * The counter {@code name} with these labels (name, value, name, value...), exposed as
     * {@code sluice_<name>_total{...}}, made on first asking.
     */
    public synchronized LongAdder counter(String name, String help, String... labels) {
        Family f = family(name, help, true);
        return f.adders.computeIfAbsent(Labels.of(labels), l -> {
            LongAdder a = new LongAdder();
            f.values.put(l, a::sum);
            return a;
        });
    }

    /**
     * {@code io_errors}: write failures and other socket errors, not logged one by one; one counter
     * that the front ends, the forwarders and the loops' write batches share.
     */
    public LongAdder ioErrors() {
        return counter("io_errors", "Write failures and other socket errors, not logged one by one.");
    }

    /**
     * A counter {@code name} kept elsewhere (a store's own count), read at every scrape: exposed
     * as {@code sluice_<name>_total} and in {@link #counters}, as those made by {@link #counter}.
     */
    public synchronized void counter(String name, String help, LongSupplier value, String... labels) {
        family(name, help, true).values.put(Labels.of(labels), value);
    }

    /** A gauge {@code name} with these labels (exposed as {@code sluice_<name>{...}}), read at every scrape. */
    public synchronized void gauge(String name, String help, LongSupplier value, String... labels) {
        family(name, help, false).values.put(Labels.of(labels), value);
    }

    /**
     * A gauge {@code name} (exposed as {@code sluice_<name>{...}}, the name ending in {@code _seconds})
     * read in nanoseconds at every scrape and exposed in seconds; absent while the value is negative.
     */
    public synchronized void gaugeSeconds(String name, String help, LongSupplier nanos, String... labels) {
        Family f = family(name, help, false);
        f.nanosAsSeconds = true;
        f.values.put(Labels.of(labels), nanos);
    }

    /** Drops every child of gauge family {@code name}: a reload's, before it declares the new ones. */
    public synchronized void removeGauges(String name) {
        Family f = families.get(name);
        if (f != null && !f.counter) {
            f.values.clear();
        }
    }

    /**
     * Drops every series, counters', gauges' and histograms', labelled {@code label}={@code value}:
     * an upstream that no forwarding generation asks any more. Asked for again, a series starts
     * from zero; a counter family's total ({@link #counters}) keeps what the dropped ones counted.
     */
    public synchronized void removeSeries(String label, String value) {
        for (Family f : families.values()) {
            f.adders.entrySet().removeIf(e -> {
                boolean drop = value.equals(e.getKey().get(label));
                if (drop && f.counter) {
                    f.removed += e.getValue().sum();
                }
                return drop;
            });
            f.values.keySet().removeIf(l -> value.equals(l.get(label)));
        }
        for (Map<Labels, LatencyHistogram> children : histograms.values()) {
            children.keySet().removeIf(l -> value.equals(l.get(label)));
        }
    }

    /** A gauge family whose children are worked out at every scrape, label sets and all. */
    public synchronized void gauges(String name, String help, Supplier<Map<Labels, Long>> children) {
        family(name, help, false).dynamic = children;
    }

    /**
     * The latency histogram {@code name} (exposed as {@code sluice_<name>_seconds}) with these
     * labels, made on first asking: asked again, as a reload that keeps an upstream does, it is
     * the same histogram.
     */
    public synchronized LatencyHistogram histogram(String name, String help, String... labels) {
        Labels l = Labels.of(labels);
        Map<Labels, LatencyHistogram> children = histograms.computeIfAbsent(name, n -> new LinkedHashMap<>());
        return children.computeIfAbsent(l, k -> new LatencyHistogram(name, help, k));
    }

    private Family family(String name, String help, boolean counter) {
        Family f = families.computeIfAbsent(name, n -> new Family(help, counter));
        if (f.counter != counter) {
            throw new IllegalArgumentException(name + " is declared as both a counter and a gauge");
        }
        return f;
    }

    /** The total of counter {@code name} over all its labels; 0 when none was declared. */
    public synchronized long count(String name) {
        Family f = families.get(name);
        return f == null || !f.counter ? 0 : f.sum();
    }

    /** The value of counter {@code name} with exactly these labels; 0 when there is none. */
    public synchronized long count(String name, String... labels) {
        Family f = families.get(name);
        LongAdder a = f == null ? null : f.adders.get(Labels.of(labels));
        return a == null ? 0 : a.sum();
    }

    /** Every counter family's total by name, in declaration order. */
    public synchronized Map<String, Long> counters() {
        Map<String, Long> out = new LinkedHashMap<>();
        families.forEach((name, f) -> {
            if (f.counter) {
                out.put(name, f.sum());
            }
        });
        return out;
    }

    /** Everything now, as the Prometheus client's snapshots: names prefixed {@code sluice_}. */
    public synchronized MetricSnapshots snapshot() {
        List<MetricSnapshot> out = new ArrayList<>();
        families.forEach((name, f) -> {
            String full = "sluice_" + name;
            if (f.counter) {
                CounterSnapshot.Builder b = CounterSnapshot.builder().name(full).help(f.help);
                f.values.forEach((labels, v) -> b.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder()
                        .labels(labels).value(v.getAsLong()).build()));
                out.add(b.build());
            } else {
                GaugeSnapshot.Builder b = GaugeSnapshot.builder().name(full).help(f.help);
                f.values.forEach((labels, v) -> {
                    long value = v.getAsLong();
                    if (!f.nanosAsSeconds || value >= 0) {
                        b.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(labels)
                                .value(f.nanosAsSeconds ? value / 1e9 : value).build());
                    }
                });
                if (f.dynamic != null) {
                    f.dynamic.get().forEach((labels, v) -> b.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder()
                            .labels(labels).value(v).build()));
                }
                out.add(b.build());
            }
        });
        histograms.forEach((name, children) -> out.add(LatencyHistogram.snapshot("sluice_" + name + "_seconds",
                new ArrayList<>(children.values()))));
        return new MetricSnapshots(out);
    }

    /** The counters as one line, {@code name=value ...}, for the log at stop. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        counters().forEach((k, v) -> sb.append(sb.length() == 0 ? "" : " ").append(k).append('=').append(v));
        return sb.toString();
    }
}
