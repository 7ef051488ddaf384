package io.sluice.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The registry's totals, as {@code /api/v1/stats}, {@code ctl stats} and the stop line read them. */
class RegistryTest {
    private static String text(Registry r) throws java.io.IOException {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter.create().write(out, r.snapshot());
        return out.toString(java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void aTotalSinceStartNeverGoesBackWhenAReloadDropsAnUpstreamsSeries() throws Exception {
        Registry r = new Registry();
        r.counter("upstream_timeouts", "help", "upstream", "127.0.0.2:53").add(3);
        r.counter("upstream_timeouts", "help", "upstream", "127.0.0.1:53").add(1);
        assertTrue(text(r).contains("127.0.0.2:53"), "a series of its own in /metrics");
        r.removeSeries("upstream", "127.0.0.2:53");
        assertEquals(4, r.counters().get("upstream_timeouts"), "the dropped upstream's 3 stay in the total");
        assertFalse(text(r).contains("127.0.0.2:53"), "its series leaves /metrics");
        r.counter("upstream_timeouts", "help", "upstream", "127.0.0.2:53").increment();
        assertEquals(5, r.counters().get("upstream_timeouts"), "asked for again, it starts from zero");
    }

    @Test
    void aCounterKeptElsewhereIsACounterToo() throws Exception {
        Registry r = new Registry();
        r.counter("state_file_failures", "Decisions the state file could not take.", () -> 7);
        assertEquals(7, r.counters().get("state_file_failures"));
        String text = text(r);
        assertTrue(text.contains("# TYPE sluice_state_file_failures_total counter") && text.contains("sluice_state_file_failures_total 7.0"),
                text);
    }
}
