package io.sluice.stress;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * What a run measured: totals, the current display interval, and a latency histogram in
 * microseconds. Touched by the generator's event loop only; read after it has stopped.
 */
final class RunStats {
    static final String[] RCODE_NAMES = {"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED"};
    private static final long MAX_LATENCY_MICROS = 600_000_000L;

    final Histogram latencyMicros = new Histogram(MAX_LATENCY_MICROS, 3);
    long sent;
    long received;
    long timeouts;
    /** Answers that came after their query had timed out: counted as lost, shown apart. */
    long late;
    final long[] rcodes = new long[16];

    long intervalSent;
    long intervalReceived;
    long intervalLatencyNanos;
    long intervalMaxNanos;
    long intervalTimeouts;
    final long[] intervalRcodes = new long[16];

    void sent() {
        sent++;
        intervalSent++;
    }

    void answered(int rcode, long latencyNanos) {
        received++;
        intervalReceived++;
        rcodes[rcode]++;
        intervalRcodes[rcode]++;
        intervalLatencyNanos += latencyNanos;
        intervalMaxNanos = Math.max(intervalMaxNanos, latencyNanos);
        latencyMicros.recordValue(Math.min(MAX_LATENCY_MICROS, Math.max(0, latencyNanos / 1000)));
    }

    void timedOut() {
        timeouts++;
        intervalTimeouts++;
    }

    /** This interval's counts, moved into a fresh {@link Interval}; the next interval starts at zero. */
    Interval takeInterval() {
        Interval i = new Interval(intervalSent, intervalReceived, intervalLatencyNanos, intervalMaxNanos,
                intervalTimeouts, intervalRcodes.clone());
        intervalSent = 0;
        intervalReceived = 0;
        intervalLatencyNanos = 0;
        intervalMaxNanos = 0;
        intervalTimeouts = 0;
        Arrays.fill(intervalRcodes, 0);
        return i;
    }

    /** Adds another generator's totals into these. */
    void add(RunStats o) {
        latencyMicros.add(o.latencyMicros);
        sent += o.sent;
        received += o.received;
        timeouts += o.timeouts;
        late += o.late;
        for (int i = 0; i < rcodes.length; i++) {
            rcodes[i] += o.rcodes[i];
        }
    }

    /** One display interval of one or more generators. */
    record Interval(long sent, long received, long latencyNanos, long maxNanos, long timeouts, long[] rcodes) {
        static final Interval EMPTY = new Interval(0, 0, 0, 0, 0, new long[16]);

        Interval plus(Interval o) {
            long[] r = rcodes.clone();
            for (int i = 0; i < r.length; i++) {
                r[i] += o.rcodes[i];
            }
            return new Interval(sent + o.sent, received + o.received, latencyNanos + o.latencyNanos,
                    Math.max(maxNanos, o.maxNanos), timeouts + o.timeouts, r);
        }

        /** dnsstresss' line, then the interval's answers by RCODE and its timeouts. */
        String line(double seconds) {
            long meanMs = received == 0 ? 0 : Math.round(latencyNanos / 1e6 / received);
            return String.format(Locale.ROOT,
                    "Requests sent: %dr/s\tReplies received: %dr/s (mean=%dms / max=%dms)"
                            + "\tNOERROR=%d REFUSED=%d SERVFAIL=%d NXDOMAIN=%d timeouts=%d",
                    Math.round(sent / seconds), Math.round(received / seconds), meanMs, Math.round(maxNanos / 1e6),
                    rcodes[0], rcodes[5], rcodes[2], rcodes[3], timeouts);
        }
    }

    /** Answers by RCODE name, those seen only. */
    Map<String, Long> rcodeCounts() {
        Map<String, Long> m = new LinkedHashMap<>();
        for (int i = 0; i < rcodes.length; i++) {
            if (rcodes[i] > 0 || i == 0 || i == 2 || i == 3 || i == 5) {
                m.put(i < RCODE_NAMES.length ? RCODE_NAMES[i] : "RCODE" + i, rcodes[i]);
            }
        }
        return m;
    }

    /** Latency percentiles in milliseconds, in a stable order. */
    Map<String, Double> latencyMs() {
        Map<String, Double> m = new LinkedHashMap<>();
        boolean none = latencyMicros.getTotalCount() == 0;
        m.put("min", none ? 0 : latencyMicros.getMinValue() / 1000.0);
        m.put("p50", none ? 0 : latencyMicros.getValueAtPercentile(50) / 1000.0);
        m.put("p90", none ? 0 : latencyMicros.getValueAtPercentile(90) / 1000.0);
        m.put("p99", none ? 0 : latencyMicros.getValueAtPercentile(99) / 1000.0);
        m.put("p99.9", none ? 0 : latencyMicros.getValueAtPercentile(99.9) / 1000.0);
        m.put("max", none ? 0 : latencyMicros.getMaxValue() / 1000.0);
        return m;
    }
}
