package io.sluice.metrics;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * Every counter and gauge sluice keeps, by name, in the order they were declared. Each package
 * declares its own where it counts (forward's {@code ForwardMeters}, the listeners', the stages');
 * a counter asked for twice by name is the same counter, so the event loops' instances of one
 * stage share it. Counters are {@link LongAdder}s, whose cells keep loops from contending on one
 * cache line; reading a total is the rare operation (a scrape, the stop line). Declaring happens
 * at start, never on a loop.
 */
public final class Registry {
    private final Map<String, Meter> counters = new LinkedHashMap<>();
    private final Map<String, Meter> gauges = new LinkedHashMap<>();

    /**
     * A counter's or gauge's help line and how to read it. A counter with labels has one adder
     * per label set, by its rendered labels ({@code upstream="127.0.0.1:53"}); {@link #value}
     * then sums them, and {@link #adder} is null.
     */
    record Meter(String help, LongSupplier value, LongAdder adder, Map<String, LongAdder> labelled) {
    }

    /** The counter {@code name} (exposed as {@code sluice_<name>_total}), made on first asking. */
    public synchronized LongAdder counter(String name, String help) {
        return counters.computeIfAbsent(name, n -> {
            LongAdder a = new LongAdder();
            return new Meter(help, a::sum, a, null);
        }).adder();
    }

    /**
     * The counter {@code name} for one value of one label ({@code sluice_<name>_total{label="value"}}),
     * made on first asking; {@link #count} gives the sum over the label's values.
     */
    public synchronized LongAdder counter(String name, String label, String value, String help) {
        Meter m = counters.computeIfAbsent(name, n -> {
            Map<String, LongAdder> byLabels = new LinkedHashMap<>();
            return new Meter(help, () -> byLabels.values().stream().mapToLong(LongAdder::sum).sum(), null, byLabels);
        });
        if (m.labelled() == null) {
            throw new IllegalArgumentException("counter " + name + " has no labels");
        }
        return m.labelled().computeIfAbsent(label + "=\"" + value.replace("\\", "\\\\").replace("\"", "\\\"") + "\"",
                l -> new LongAdder());
    }

    /** A gauge {@code name} (exposed as {@code sluice_<name>}), read at every scrape. */
    public synchronized void gauge(String name, String help, LongSupplier value) {
        gauges.put(name, new Meter(help, value, null, null));
    }

    /** The total of counter {@code name}; 0 when none was declared. */
    public synchronized long count(String name) {
        Meter m = counters.get(name);
        return m == null ? 0 : m.value().getAsLong();
    }

    /** Every counter's total by name, in declaration order. */
    public synchronized Map<String, Long> counters() {
        Map<String, Long> out = new LinkedHashMap<>();
        counters.forEach((name, m) -> out.put(name, m.value().getAsLong()));
        return out;
    }

    synchronized Map<String, Meter> counterMeters() {
        return new LinkedHashMap<>(counters);
    }

    synchronized Map<String, Meter> gaugeMeters() {
        return new LinkedHashMap<>(gauges);
    }

    /** The counters as one line, {@code name=value ...}, for the log at stop. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        counters().forEach((k, v) -> sb.append(sb.length() == 0 ? "" : " ").append(k).append('=').append(v));
        return sb.toString();
    }
}
