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
            assertTrue(body.contains("# TYPE sluice_queries_udp_total counter\nsluice_queries_udp_total 3\n"), body);
            assertTrue(body.contains("sluice_queries_tcp_total 1\n"), body);
            assertTrue(body.contains("sluice_limited_total 1\n"), body);
            assertTrue(body.contains("sluice_answered_total 3\n"), body);
            assertTrue(body.contains("# TYPE sluice_tracked_domains gauge\nsluice_tracked_domains 2\n"), body);
            assertTrue(body.contains("# TYPE sluice_replies_rejected_total counter\nsluice_replies_rejected_total{upstream=\""
                    + up.hostPort() + "\"} 0\n"), "a counter per upstream: " + body);
        }
    }
}
