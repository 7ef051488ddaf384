package io.sluice.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.limit.ManualClock;
import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * cache.prefetch end to end: real queries to a real upstream, time moved by hand. One event loop,
 * so that a query asked after another is handled after it: a query for another name, answered,
 * shows that nothing more reached the upstream before it.
 */
class PrefetchTest {
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
        List<String> kv = new ArrayList<>(List.of("cache.size", "1000", "threads", "1", "cache.prefetch", "true"));
        kv.addAll(List.of(keyValues));
        return RunningSluice.start(List.of(upstream), clock, b -> { }, kv.toArray(new String[0]));
    }

    private int asked() {
        return upstream.udpQueries() + upstream.tcpQueries();
    }

    private static int ttl(byte[] wire) throws Exception {
        return (int) Dns.parse(wire).getSection(Section.ANSWER).get(0).getTTL();
    }

    @Test
    void aHitInTheLastTenthOfItsLifetimeRefreshesTheAnswerBeforeItExpires() throws Exception {
        try (RunningSluice s = sluice()) {
            assertEquals(300, ttl(Dns.udp(s.address(), Dns.query(1, "hot.example.", Type.A))));
            clock.advanceMillis(265_000);
            assertEquals(35, ttl(Dns.udp(s.address(), Dns.query(2, "hot.example.", Type.A))));
            Dns.udp(s.address(), Dns.query(3, "other.example.", Type.A));
            assertEquals(2, asked(), "35 s of 300 left: no prefetch yet");

            upstream.ttl("hot.example.", 600);
            clock.advanceMillis(10_000);
            assertEquals(25, ttl(Dns.udp(s.address(), Dns.query(4, "hot.example.", Type.A))), "answered from the cache");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            int served;
            do { // until the prefetch's answer has replaced the old one; these hits ask nothing more
                served = ttl(Dns.udp(s.address(), Dns.query(5, "hot.example.", Type.A)));
            } while (served == 25 && System.nanoTime() < deadline);
            assertEquals(600, served, "the refreshed answer");
            assertEquals(3, asked(), "one prefetch, however many hits");
            assertEquals(1, s.sluice().metrics().count("cache_prefetches"));

            clock.advanceMillis(30_000); // past the first answer's expiry
            assertEquals(570, ttl(Dns.udp(s.address(), Dns.query(6, "hot.example.", Type.A))));
            assertEquals(3, asked(), "never expired: no miss");
        }
    }

    @Test
    void anAnswerLivingUnderTenSecondsIsNotPrefetched() throws Exception {
        upstream.ttl("short.example.", 5);
        try (RunningSluice s = sluice()) {
            Dns.udp(s.address(), Dns.query(1, "short.example.", Type.A));
            clock.advanceMillis(4_800);
            assertEquals(1, ttl(Dns.udp(s.address(), Dns.query(2, "short.example.", Type.A))));
            Dns.udp(s.address(), Dns.query(3, "other.example.", Type.A));
            assertEquals(2, asked());
            assertEquals(0, s.sluice().metrics().count("cache_prefetches"));
        }
    }

    @Test
    void aPrefetchSpendsItsDomainsBudgetAndIsNotSentOverIt() throws Exception {
        try (RunningSluice s = sluice("limits.default.queries", "1", "limits.default.window", "1h")) {
            Dns.udp(s.address(), Dns.query(1, "www.budget.example.", Type.A));
            clock.advanceMillis(275_000);
            byte[] hit = Dns.udp(s.address(), Dns.query(2, "www.budget.example.", Type.A));
            assertEquals(Rcode.NOERROR, Dns.rcode(hit), "the client has its answer from the cache");
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(3, "other.example.", Type.A))));
            assertEquals(2, asked(), "the prefetch was over budget.example's budget: not sent");
            assertEquals(1, s.sluice().metrics().count("cache_prefetches"));
            assertEquals(1, s.sluice().metrics().count("limited"), "counted as any query refused");
        }
    }

    @Test
    void aTcpClientsHitIsPrefetchedOverUdp() throws Exception {
        try (RunningSluice s = sluice()) {
            Dns.tcp(s.address(), Dns.query(1, "tcp.example.", Type.A));
            assertEquals(1, upstream.tcpQueries());
            clock.advanceMillis(275_000);
            Message hit = Dns.parse(Dns.tcp(s.address(), Dns.query(2, "tcp.example.", Type.A)));
            assertEquals(25, hit.getSection(Section.ANSWER).get(0).getTTL());
            Dns.udp(s.address(), Dns.query(3, "other.example.", Type.A));
            assertEquals(2, upstream.udpQueries(), "the prefetch, then the other name, over UDP");
            assertEquals(1, upstream.tcpQueries());
            assertEquals(1, s.sluice().metrics().count("cache_prefetches"));
        }
    }
}
