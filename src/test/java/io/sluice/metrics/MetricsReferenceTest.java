package io.sluice.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.testing.Await;
import io.sluice.testing.Dns;
import io.sluice.testing.RedisServer;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestCertificates;
import io.sluice.testing.TestUpstream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xbill.DNS.Type;

/**
 * docs/metrics.md is what running servers declare: one with every feature the in-memory backend
 * has (cache, TLS, per-client budgets, a tls:// upstream), one per other backend. Run with
 * {@code -Dsluice.write-docs=true} to write the page again.
 */
class MetricsReferenceTest {
    private static final Path PAGE = Path.of("docs/metrics.md");

    @TempDir
    Path dir;

    @Test
    void metricsMdListsEveryFamilyTheServersDeclare() throws Exception {
        RedisServer.assumeInstalled();
        Path[] cert = TestCertificates.selfSigned(dir, "metrics");
        MetricsReference reference = new MetricsReference();
        try (TestUpstream up = new TestUpstream();
             RunningSluice all = RunningSluice.start(List.of(), b -> {
                 b.set("upstreams", List.of(up.hostPort(), "tls://127.0.0.1:1#upstream.test"));
                 b.set("tls-listen", List.of("127.0.0.1:0"));
                 b.set("https-listen", List.of("127.0.0.1:0")); // each front end declares its queries{protocol}
                 b.set("tls-cert-file", List.of(cert[0].toString()));
                 b.set("tls-key-file", List.of(cert[1].toString()));
                 b.set("cache.size", List.of("1000"));
                 b.set("limits.default.queries", List.of("100"));
                 b.set("limits.per-client.queries", List.of("10"));
                 b.set("metrics", List.of("127.0.0.1:0"));
                 b.set("admin.listen", List.of("127.0.0.1:0"));
             })) {
            // a reply, so that the upstream's round-trip time, absent before one, is listed with its label
            Dns.udp(all.address(), Dns.query(1, "rtt.example.", Type.A));
            Await.until("the RTT published", () -> all.sluice().upstreams().get(0).rttNanos() >= 0);
            // and the busiest domains drained (four times a second), so that their gauge lists its label every run
            Await.until("the busiest domains drained",
                    () -> all.sluice().metricsText().contains("sluice_top_domain_queries{domain="));
            reference.add(all.sluice().metrics().snapshot(), "");
        }
        try (TestUpstream up = new TestUpstream();
             RunningSluice dnstap = RunningSluice.start(List.of(up), "dnstap.socket",
                     dir.resolve("dnstap.sock").toString())) {
            reference.add(dnstap.sluice().metrics().snapshot(), "`dnstap.socket`");
        }
        try (TestUpstream up = new TestUpstream();
             RunningSluice chronicle = RunningSluice.start(List.of(up), "limits.default.queries", "100",
                     "backend", "chronicle", "state-file", dir.resolve("counters.dat").toString())) {
            reference.add(chronicle.sluice().metrics().snapshot(), "`backend: chronicle`");
        }
        try (RedisServer redis = RedisServer.start(dir);
             TestUpstream up = new TestUpstream();
             RunningSluice shared = RunningSluice.start(List.of(up), "limits.default.queries", "100",
                     "backend", "redis", "redis", redis.uri())) {
            reference.add(shared.sluice().metrics().snapshot(), "`backend: redis`");
        }
        String page = reference.markdown();
        for (String family : List.of("sluice_queries_total", "sluice_upstream_latency_seconds", "sluice_cache_hits_total",
                "sluice_tls_handshakes_failed_total", "sluice_top_domain_queries", "sluice_redis_up", "sluice_state_file_domains")) {
            assertTrue(page.contains("| `" + family + "` |"), family + " missing from\n" + page);
        }
        if (Boolean.getBoolean("sluice.write-docs")) {
            Files.writeString(PAGE, page);
        }
        assertEquals(page, Files.exists(PAGE) ? Files.readString(PAGE) : "",
                "docs/metrics.md is stale: mvn test -Dtest=MetricsReferenceTest -Dsluice.write-docs=true");
    }
}
