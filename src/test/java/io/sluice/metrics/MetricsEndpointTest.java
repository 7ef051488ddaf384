package io.sluice.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.limit.ManualClock;
import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Type;

/** /metrics over real HTTP, after real queries. */
class MetricsEndpointTest {

    @Test
    void countersAndTheTrackedDomainsAreServedInPrometheusFormat() throws Exception {
        try (TestUpstream up = new TestUpstream();
             // time held still: three queries must fall in one window
             RunningSluice s = RunningSluice.start(List.of(up), new ManualClock(), b -> { }, "metrics", "127.0.0.1:0",
                     "limits.default.queries", "2")) {
            for (int i = 0; i < 3; i++) {
                Dns.udp(s.address(), Dns.query(i, "m" + i + ".example.com.", Type.A));
            }
            Dns.tcp(s.address(), Dns.query(9, "other.example.net.", Type.A));
            var m = s.sluice().metricsAddress();
            HttpResponse<String> r = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + m.getPort() + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode());
            assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/plain"));
            String body = r.body();
            assertHas(body, "# TYPE sluice_queries_total counter");
            assertHas(body, "sluice_queries_total{protocol=\"udp\"} 3.0");
            assertHas(body, "sluice_queries_total{protocol=\"tcp\"} 1.0");
            assertHas(body, "sluice_limited_total{action=\"refused\"} 1.0");
            assertHas(body, "sluice_answers_total{rcode=\"NOERROR\",source=\"upstream\"} 3.0");
            assertHas(body, "sluice_answers_total{rcode=\"REFUSED\",source=\"sluice\"} 1.0");
            assertHas(body, "# TYPE sluice_tracked_domains gauge\nsluice_tracked_domains 2.0");
            String upstream = "{upstream=\"" + up.hostPort() + "\"}";
            assertHas(body, "sluice_replies_rejected_total" + upstream + " 0.0");
            assertHas(body, "sluice_upstream_timeouts_total" + upstream + " 0.0");
            assertHas(body, "sluice_upstream_up" + upstream + " 1.0");
            assertHas(body, "# TYPE sluice_upstream_latency_seconds histogram");
            assertHas(body, "sluice_upstream_latency_seconds_count" + upstream + " 3");
            assertHas(body, "# TYPE jvm_memory_used_bytes gauge");
            for (String line : body.split("\n")) {
                if (line.startsWith("# TYPE ")) {
                    String family = line.split(" ")[2];
                    assertTrue(body.contains("# HELP " + family + " "), "HELP for " + family);
                }
            }
        }
    }

    private static void assertHas(String body, String text) {
        assertTrue(body.contains(text), text + " in:\n" + body);
    }
}
