package io.sluice.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.domain.DomainProbe;
import io.sluice.limit.DomainLimiter;
import io.sluice.limit.ManualClock;
import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xbill.DNS.Message;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * Limits that count what reaches the upstream: cached answers keep flowing to a domain over its
 * budget, and a random-subdomain flood is detected and cut while the victim's real names answer.
 */
class CacheAwareLimitsTest {
    private final ManualClock clock = new ManualClock();
    private TestUpstream upstream;

    @BeforeEach
    void upstream() throws Exception {
        upstream = new TestUpstream();
    }

    @AfterEach
    void stop() throws Exception {
        upstream.close();
    }

    private RunningSluice sluice(String... keyValues) throws Exception {
        List<String> kv = new ArrayList<>(List.of("cache.size", "10000", "limits.janitor-interval", "1h"));
        kv.addAll(List.of(keyValues));
        return RunningSluice.start(List.of(upstream), clock, b -> { }, kv.toArray(new String[0]));
    }

    private static byte[] edns(int id, String name) {
        Message m = Dns.message(id, name, Type.A);
        m.addRecord(new OPTRecord(1232, 0, 0), Section.ADDITIONAL);
        return m.toWire();
    }

    @Test
    void aCachedAnswerCostsNoBudgetAndAnExpiredOneIsServedStaleOverIt() throws Exception {
        try (RunningSluice s = sluice("limits.default.queries", "2")) {
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), edns(1, "www.example.net."))));
            for (int i = 0; i < 20; i++) {
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), edns(2, "www.example.net."))),
                        "from the cache, spending nothing");
            }
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), edns(3, "a.example.net."))), "the second of two");
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.udp(s.address(), edns(4, "b.example.net."))), "a miss over it");
            assertEquals(2, upstream.udpQueries());

            clock.advanceMillis(400_000); // www.example.net expired 100 s ago; a new window
            Dns.udp(s.address(), edns(5, "c.example.net."));
            Dns.udp(s.address(), edns(6, "d.example.net."));
            Message stale = Dns.parse(Dns.udp(s.address(), edns(7, "www.example.net.")));
            Dns.assertStale(stale, "over budget, but a stale answer is kept");
            assertEquals(4, upstream.udpQueries());
        }
        try (RunningSluice s = sluice("limits.default.queries", "1", "cache.stale-when-limited", "false")) {
            Dns.udp(s.address(), edns(1, "www.example.net."));
            clock.advanceMillis(400_000);
            Dns.udp(s.address(), edns(2, "c.example.net."));
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.udp(s.address(), edns(3, "www.example.net."))),
                    "stale-when-limited false: the action");
        }
    }

    @Test
    void aRandomSubdomainFloodIsCutToATenthWhileTheVictimsRealNamesKeepAnswering() throws Exception {
        upstream.zone("victim.example.", "www.victim.example.", "mail.victim.example.");
        try (RunningSluice s = sluice("limits.default.queries", "100")) {
            assertEquals("192.0.2.1", Dns.parse(Dns.udp(s.address(), Dns.query(1, "www.victim.example.", Type.A)))
                    .getSection(Section.ANSWER).get(0).rdataToString());
            int[] reached = new int[4];
            int real = 0;
            int flood = 0;
            for (int window = 0; window < 4; window++) {
                int before = upstream.udpQueries();
                for (int i = 0; i < 1000; i++) { // ten times the domain's budget, every label new
                    int rcode = Dns.rcode(Dns.udp(s.address(),
                            Dns.query(i, "r" + window + "x" + i + ".victim.example.", Type.A)));
                    assertTrue(rcode == Rcode.NXDOMAIN || rcode == Rcode.REFUSED, "rcode " + rcode);
                    flood++;
                    if (i % 20 == 0) {
                        Message m = Dns.parse(Dns.udp(s.address(), Dns.query(i, "www.victim.example.", Type.A)));
                        assertEquals(Rcode.NOERROR, m.getRcode(), "the real name, window " + window);
                        assertEquals("192.0.2.1", m.getSection(Section.ANSWER).get(0).rdataToString());
                        real++;
                    }
                }
                reached[window] = upstream.udpQueries() - before;
                clock.advanceMillis(1000);
            }
            assertEquals(4000, flood);
            assertEquals(200, real, "every real answer correct");
            assertEquals(99, reached[0], "the first window: the whole budget, less the real name's first query");
            for (int w = 1; w < 4; w++) {
                assertTrue(reached[w] <= 10, "window " + w + " reached the upstream " + reached[w] + " times: a tenth");
            }
            assertEquals(1, s.sluice().metrics().count("floods_detected"));
            assertTrue(s.sluice().limits().limiter().flooded("victim.example"), "flooded now");
            assertEquals(1, s.sluice().limits().limiter().floodedDomains());

            // The flood stops; a real name the cache does not hold is slowed, never stopped.
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(1, "mail.victim.example.", Type.A))));
            clock.advanceMillis(1000);
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(2, "mail.victim.example.", Type.AAAA))));
            assertEquals(0, s.sluice().limits().limiter().floodedDomains(), "a window of real answers ends it");
        }
    }

    @TempDir
    Path dir;

    @Test
    void aReloadRecutsAFloodedDomainAndDetectionOnOrOffWaitsForARestart() throws Exception {
        upstream.zone("victim.example.", "www.victim.example.");
        Path conf = dir.resolve("sluice.yml");
        Files.writeString(conf, "limits:\n  default: { queries: 100, window: 1s }\n  flood: { budget: 0.1 }\n");
        try (RunningSluice s = RunningSluice.start(List.of(upstream), clock, b -> b.configFile(conf),
                "limits.janitor-interval", "1h")) {
            for (int i = 0; i < 100; i++) {
                Dns.udp(s.address(), Dns.query(i, "r" + i + ".victim.example.", Type.A));
            }
            clock.advanceMillis(1000);
            Dns.udp(s.address(), Dns.query(1, "next.victim.example.", Type.A)); // ends the window: judged
            DomainLimiter limiter = s.sluice().limits().limiter();
            assertTrue(limiter.flooded("victim.example"));
            assertEquals(10, limiter.budget(limiter.existing(DomainProbe.of("victim.example"))).queries());

            Files.writeString(conf, "limits:\n  default: { queries: 100, window: 1s }\n  flood: { budget: 0.5 }\n");
            List<String> changes = s.sluice().reload();
            assertEquals(List.of("limits.flood.budget: 0.1 -> 0.5"), changes);
            assertEquals(50, limiter.budget(limiter.existing(DomainProbe.of("victim.example"))).queries(), "cut again");

            Files.writeString(conf, "limits:\n  default: { queries: 100, window: 1s }\n"
                    + "  flood: { budget: 0.5, detect: false }\n");
            assertEquals(List.of("limits.flood.detect: needs a restart, kept as it was"), s.sluice().reload());
            assertTrue(limiter.flooded("victim.example"), "detection stays on until a restart");
        }
    }
}
