package io.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.testing.Await;
import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/** A reload that moves sluice to another upstream while queries flow: none lost, none SERVFAIL. */
class ReloadUnderLoadTest {
    @TempDir
    Path dir;

    @Test
    void switchingUpstreamsUnderLoadLosesNoQuery() throws Exception {
        Path conf = dir.resolve("sluice.yml");
        try (TestUpstream a = new TestUpstream(); TestUpstream b = new TestUpstream()) {
            Files.writeString(conf, "upstreams: [" + a.hostPort() + "]\nlimits:\n  default: { queries: 1000000 }\n");
            a.delayMillis(20); // queries are in flight on the old upstream when the switch comes
            try (RunningSluice s = RunningSluice.startFor(List.of(), io.sluice.limit.Clock.system(),
                    x -> x.configFile(conf))) {
                AtomicBoolean stop = new AtomicBoolean();
                Map<Integer, AtomicInteger> rcodes = new ConcurrentHashMap<>();
                AtomicInteger sent = new AtomicInteger();
                ExecutorService clients = Executors.newFixedThreadPool(4);
                List<Future<?>> running = new java.util.ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    int thread = t;
                    running.add(clients.submit(() -> {
                        for (int i = 0; !stop.get(); i++) {
                            int rcode = Dns.rcode(Dns.udp(s.address(), Dns.query(i & 0xFFFF, "q" + i + ".t" + thread
                                    + ".example.", Type.A), 5000));
                            rcodes.computeIfAbsent(rcode, k -> new AtomicInteger()).incrementAndGet();
                            sent.incrementAndGet();
                        }
                        return null;
                    }));
                }
                Await.until("40 queries sent", () -> sent.get() >= 40);
                Files.writeString(conf, "upstreams: [" + b.hostPort() + "]\ntimeout: 1s\n"
                        + "limits:\n  default: { queries: 1000000 }\n");
                List<String> changes = s.sluice().reload();
                assertTrue(changes.contains("upstreams: " + a.hostPort() + " -> " + b.hostPort()), changes.toString());
                assertTrue(changes.contains("timeout: 2s -> 1s"), changes.toString());
                int atSwitch = sent.get();
                Await.until("200 queries sent after the switch", () -> sent.get() >= atSwitch + 200);
                stop.set(true);
                for (Future<?> f : running) {
                    f.get(); // a query that got no answer at all would throw here
                }
                clients.shutdown();
                assertEquals(Map.of(Rcode.NOERROR, sent.get()), Map.of(Rcode.NOERROR, rcodes.get(Rcode.NOERROR).get()),
                        "every query answered NOERROR: " + rcodes);
                assertEquals(1, rcodes.size(), rcodes.toString());
                assertTrue(b.udpQueries() >= 200, "the new upstream took over: " + b.udpQueries());
                int aBefore = a.udpQueries();
                Dns.udp(s.address(), Dns.query(1, "after.example.", Type.A));
                assertEquals(aBefore, a.udpQueries(), "the old upstream gets nothing new");
                assertEquals(b.hostPort(), s.sluice().upstreams().get(0).toString());
            }
        }
    }

    @Test
    void anUpstreamAReloadRemovedLeavesNoSeriesOnceItsLastQueriesAreDone() throws Exception {
        Path conf = dir.resolve("sluice.yml");
        try (TestUpstream a = new TestUpstream(); TestUpstream b = new TestUpstream()) {
            Files.writeString(conf, "upstreams: [" + a.hostPort() + "]\ntimeout: 200ms\nquery-timeout: 200ms\n");
            try (RunningSluice s = RunningSluice.startFor(List.of(), io.sluice.limit.Clock.system(),
                    x -> x.configFile(conf))) {
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(1, "x.example.", Type.A))));
                String old = "upstream=\"" + a.hostPort() + "\"";
                assertTrue(s.sluice().metricsText().contains(old));
                Files.writeString(conf, "upstreams: [" + b.hostPort() + "]\ntimeout: 200ms\nquery-timeout: 200ms\n");
                s.sluice().reload();
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(2, "y.example.", Type.A))));
                // the old generation closes a query-timeout and a margin after the switch
                Await.until("the old upstream's series gone", () -> !s.sluice().metricsText().contains(old));
                String m = s.sluice().metricsText();
                assertFalse(m.contains(old), "no series of the removed upstream lingers");
                assertTrue(m.contains("sluice_upstream_latency_seconds_count{upstream=\"" + b.hostPort() + "\"}"), m);
            }
        }
    }
}
