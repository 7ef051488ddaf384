package io.sluice.cache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.limit.ManualClock;
import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.ClientSubnetOption;
import org.xbill.DNS.CookieOption;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.Flags;
import org.xbill.DNS.GenericEDNSOption;
import org.xbill.DNS.Message;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** The answer cache end to end: real queries over UDP and TCP to a real upstream, time moved by hand. */
class AnswerCacheTest {
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
        List<String> kv = new ArrayList<>(List.of("cache.size", "1000", "timeout", "200ms", "query-timeout", "400ms"));
        kv.addAll(List.of(keyValues));
        return RunningSluice.start(List.of(upstream), clock, b -> { }, kv.toArray(new String[0]));
    }

    private int asked() {
        return upstream.udpQueries() + upstream.tcpQueries();
    }

    private static long count(RunningSluice s, String name) {
        return s.sluice().metrics().count(name);
    }

    private static byte[] withOpt(Message m, boolean dnssecOk, int payload, List<EDNSOption> options) {
        m.addRecord(new OPTRecord(payload, 0, 0, dnssecOk ? Flags.DO : 0, options), Section.ADDITIONAL);
        return m.toWire();
    }

    @Test
    void aRepeatedQueryIsAnsweredWithTheClientsIdAndCaseAndItsTtlCountedDown() throws Exception {
        try (RunningSluice s = sluice()) {
            Message first = Dns.parse(Dns.udp(s.address(), Dns.query(1, "WwW.Example.COM.", Type.A)));
            assertEquals(300, first.getSection(Section.ANSWER).get(0).getTTL());
            assertEquals(1, asked());
            clock.advanceMillis(100_500);
            byte[] q = Dns.query(2, "www.EXAMPLE.com.", Type.A);
            byte[] wire = Dns.udp(s.address(), q);
            assertEquals(1, asked(), "the second query never reached the upstream");
            assertEquals(2, Dns.id(wire));
            // the question's name, byte for byte as the client wrote it
            assertArrayEquals(Arrays.copyOfRange(q, 12, 12 + 17), Arrays.copyOfRange(wire, 12, 12 + 17));
            Message second = Dns.parse(wire);
            assertEquals(200, second.getSection(Section.ANSWER).get(0).getTTL(), "300 s less the 100 s it was kept");
            assertEquals("192.0.2.1", second.getSection(Section.ANSWER).get(0).rdataToString());
            assertEquals(1, count(s, "cache_hits"));
            assertEquals(1, count(s, "cache_misses"));
            assertEquals(1, s.sluice().metrics().count("answers", "rcode", "NOERROR", "source", "cache"));
            Dns.tcp(s.address(), Dns.query(3, "www.example.com.", Type.A));
            assertEquals(2, asked(), "over TCP, an answer of its own: a UDP answer may lack what the TCP one holds");
            Dns.tcp(s.address(), Dns.query(4, "WWW.example.com.", Type.A));
            assertEquals(2, asked(), "over TCP, from the cache");
            clock.advanceMillis(200_000);
            Dns.udp(s.address(), Dns.query(5, "www.example.com.", Type.A));
            assertEquals(3, asked(), "expired after its TTL: asked again");
        }
    }

    @Test
    void anAnswerGoesOnlyToQueriesTheUpstreamWouldAnswerTheSame() throws Exception {
        try (RunningSluice s = sluice()) {
            Dns.udp(s.address(), withOpt(Dns.message(1, "a.example.", Type.A), false, 1232, List.of()));
            assertEquals(1, asked());
            byte[] plain = Dns.udp(s.address(), Dns.query(2, "a.example.", Type.A));
            assertEquals(2, asked(), "no EDNS: another answer");
            assertNull(Dns.parse(plain).getOPT(), "an answer cached for EDNS never reaches a client without it");
            Dns.udp(s.address(), withOpt(Dns.message(3, "a.example.", Type.A), true, 1232, List.of()));
            assertEquals(3, asked(), "DO set: another answer");
            Message noRd = Dns.message(4, "a.example.", Type.A);
            noRd.getHeader().unsetFlag(Flags.RD);
            Dns.udp(s.address(), noRd.toWire());
            assertEquals(4, asked(), "RD clear: another answer");
            Message cd = Dns.message(5, "a.example.", Type.A);
            cd.getHeader().setFlag(Flags.CD);
            Dns.udp(s.address(), cd.toWire());
            assertEquals(5, asked(), "CD set: another answer");
            Dns.udp(s.address(), Dns.query(6, "a.example.", Type.AAAA));
            assertEquals(6, asked(), "another type");
            Dns.udp(s.address(), Dns.query(7, "A.EXAMPLE.", Type.A));
            Dns.udp(s.address(), withOpt(Dns.message(8, "a.example.", Type.A), false, 4096, List.of()));
            Dns.udp(s.address(), withOpt(Dns.message(9, "a.example.", Type.A), true, 1232, List.of()));
            assertEquals(6, asked(), "each of those again, in any case and payload size, from the cache");
        }
    }

    @Test
    void typesWhoseOctetsLookLikeLettersAreNotConfused() throws Exception {
        upstream.zone("victim.example.", "www.victim.example.");
        try (RunningSluice s = sluice()) {
            Message https = Dns.parse(Dns.udp(s.address(), Dns.query(1, "www.victim.example.", 65)));
            assertEquals(Rcode.NOERROR, https.getRcode());
            assertEquals(1, https.getSection(Section.AUTHORITY).size(), "NODATA with its SOA: kept");
            Dns.udp(s.address(), Dns.query(2, "www.victim.example.", 65));
            assertEquals(1, asked(), "HTTPS again: from the cache");
            Message other = Dns.parse(Dns.udp(s.address(), Dns.query(3, "www.victim.example.", 97)));
            assertEquals(2, asked(), "type 97 (0x61, a lower-case 0x41) is another question");
            assertEquals(97, other.getQuestion().getType());
        }
    }

    @Test
    void anEdnsVersionOtherThanZeroIsNeverAnsweredFromTheCache() throws Exception {
        try (RunningSluice s = sluice()) {
            Message v1 = Dns.message(1, "v.example.", Type.A);
            v1.addRecord(new OPTRecord(1232, 0, 1), Section.ADDITIONAL);
            Dns.udp(s.address(), withOpt(Dns.message(2, "v.example.", Type.A), false, 1232, List.of()));
            Dns.udp(s.address(), v1.toWire());
            assertEquals(2, asked(), "version 1 goes to the upstream, which may answer BADVERS");
        }
    }

    @Test
    void nxdomainIsKeptForTheSoaMinimumCappedByMaxNegativeTtl() throws Exception {
        upstream.zone("victim.example.", "www.victim.example.");
        try (RunningSluice s = sluice()) {
            Message nx = Dns.parse(Dns.udp(s.address(), Dns.query(1, "nope.victim.example.", Type.A)));
            assertEquals(Rcode.NXDOMAIN, nx.getRcode());
            clock.advanceMillis(59_000);
            Message again = Dns.parse(Dns.udp(s.address(), Dns.query(2, "nope.victim.example.", Type.A)));
            assertEquals(Rcode.NXDOMAIN, again.getRcode());
            assertEquals(1, asked(), "within the SOA's minimum, 60 s");
            assertEquals(1, again.getSection(Section.AUTHORITY).get(0).getTTL(),
                    "the SOA's TTL is min(TTL 300, MINIMUM 60) and counts down (RFC 2308 section 5)");
            clock.advanceMillis(2_000);
            Dns.udp(s.address(), Dns.query(3, "nope.victim.example.", Type.A));
            assertEquals(2, asked(), "past it: asked again");
        }
        try (RunningSluice s = sluice("cache.max-negative-ttl", "10s")) {
            int before = asked();
            Dns.udp(s.address(), Dns.query(1, "nope.victim.example.", Type.A));
            clock.advanceMillis(9_000);
            Dns.udp(s.address(), Dns.query(2, "nope.victim.example.", Type.A));
            assertEquals(before + 1, asked());
            clock.advanceMillis(2_000);
            Dns.udp(s.address(), Dns.query(3, "nope.victim.example.", Type.A));
            assertEquals(before + 2, asked(), "capped at 10 s");
        }
    }

    @Test
    void aTtlPastMaxTtlIsServedAsMaxTtl() throws Exception {
        upstream.ttl("long.example.", 604_800);
        try (RunningSluice s = sluice("cache.max-ttl", "1h")) {
            Dns.udp(s.address(), Dns.query(1, "long.example.", Type.A));
            clock.advanceMillis(600_000);
            Message again = Dns.parse(Dns.udp(s.address(), Dns.query(2, "long.example.", Type.A)));
            assertEquals(1, asked());
            assertEquals(3000, again.getSection(Section.ANSWER).get(0).getTTL(),
                    "kept an hour, so said to be good for what is left of the hour, not of the week");
        }
    }

    @Test
    void nxdomainWithoutSoaZeroTtlAndTruncatedAnswersAreNotKept() throws Exception {
        upstream.ttl("zero.example.", 0);
        try (RunningSluice s = sluice()) {
            for (String name : new String[] {TestUpstream.NX, "zero.example."}) {
                int before = asked();
                Dns.udp(s.address(), Dns.query(1, name, Type.A));
                Dns.udp(s.address(), Dns.query(2, name, Type.A));
                assertEquals(before + 2, asked(), name);
            }
            int before = upstream.udpQueries();
            assertTrue((Dns.udp(s.address(), Dns.query(3, TestUpstream.BIG, Type.TXT))[2] & 0x02) != 0, "TC from upstream");
            Dns.udp(s.address(), Dns.query(4, TestUpstream.BIG, Type.TXT));
            assertEquals(before + 2, upstream.udpQueries(), "a TC answer is not kept");
        }
    }

    @Test
    void aTcpAnswerIsNeverServedToAUdpClientNorAUdpAnswerToATcpOne() throws Exception {
        try (RunningSluice s = sluice()) {
            Message full = Dns.parse(Dns.tcp(s.address(), Dns.query(1, TestUpstream.BIG, Type.TXT)));
            assertEquals(1, full.getSection(Section.ANSWER).size());
            assertEquals(1, upstream.tcpQueries());
            Message tc = Dns.parse(Dns.udp(s.address(), Dns.query(2, TestUpstream.BIG, Type.TXT)));
            assertTrue(tc.getHeader().getFlag(Flags.TC), "the upstream's own TC over UDP");
            assertEquals(2, asked(), "asked over UDP: the answer kept over TCP is for TCP clients");
            assertEquals(0, count(s, "cache_truncated"));
            Message again = Dns.parse(Dns.tcp(s.address(), Dns.query(3, TestUpstream.BIG, Type.TXT)));
            assertEquals(full.getSection(Section.ANSWER), again.getSection(Section.ANSWER));
            assertEquals(2, asked(), "over TCP, whole, from the cache");
        }
    }

    @Test
    void aUdpAnswerIsKeptForThePayloadSizeItWasAskedWithAtMostMaxUdpSize() throws Exception {
        try (RunningSluice s = sluice()) {
            Dns.udp(s.address(), withOpt(Dns.message(1, "size.example.", Type.A), false, 1232, List.of()));
            assertEquals(1, asked());
            Dns.udp(s.address(), withOpt(Dns.message(2, "size.example.", Type.A), false, 4096, List.of()));
            assertEquals(1, asked(), "4096 is asked upstream as 1232 (max-udp-size): the same answer");
            Dns.udp(s.address(), withOpt(Dns.message(3, "size.example.", Type.A), false, 1000, List.of()));
            assertEquals(2, asked(), "a smaller size may get less from the upstream: asked");
            Dns.udp(s.address(), withOpt(Dns.message(4, "size.example.", Type.A), false, 1000, List.of()));
            assertEquals(2, asked());
        }
    }

    @Test
    void aServfailIsKeptAFewSeconds() throws Exception {
        upstream.servfail("sf.example.");
        try (RunningSluice s = sluice()) {
            assertEquals(Rcode.SERVFAIL, Dns.rcode(Dns.udp(s.address(), Dns.query(1, "sf.example.", Type.A))));
            clock.advanceMillis(4_000);
            assertEquals(Rcode.SERVFAIL, Dns.rcode(Dns.udp(s.address(), Dns.query(2, "sf.example.", Type.A))));
            assertEquals(1, asked(), "within servfail-ttl, 5 s");
            upstream.noServfail("sf.example.");
            clock.advanceMillis(2_000);
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(3, "sf.example.", Type.A))));
            assertEquals(2, asked());
        }
    }

    @Test
    void whenNoUpstreamAnswersAnExpiredAnswerIsServedStale() throws Exception {
        try (RunningSluice s = sluice()) {
            Dns.udp(s.address(), withOpt(Dns.message(1, "www.example.org.", Type.A), false, 1232, List.of()));
            upstream.mode(TestUpstream.Mode.SILENT);
            clock.advanceMillis(3_600_000);
            Message stale = Dns.parse(Dns.udp(s.address(),
                    withOpt(Dns.message(2, "www.example.org.", Type.A), false, 1232, List.of()), 3000));
            Dns.assertStale(stale, "no upstream answered");
            assertEquals("192.0.2.1", stale.getSection(Section.ANSWER).get(0).rdataToString());
            assertEquals(1, count(s, "cache_stale_answers"));
            assertEquals(Rcode.SERVFAIL, Dns.rcode(Dns.udp(s.address(), Dns.query(3, "never.example.org.", Type.A), 3000)),
                    "nothing kept: SERVFAIL");
        }
        upstream.mode(TestUpstream.Mode.ANSWER);
        try (RunningSluice s = sluice("cache.stale-ttl", "0s")) {
            Dns.udp(s.address(), Dns.query(1, "www.example.org.", Type.A));
            upstream.mode(TestUpstream.Mode.SILENT);
            clock.advanceMillis(301_000);
            assertEquals(Rcode.SERVFAIL, Dns.rcode(Dns.udp(s.address(), Dns.query(2, "www.example.org.", Type.A), 3000)),
                    "stale-ttl 0: never stale");
        }
    }

    @Test
    void anUpstreamsServfailGetsTheStaleAnswerInstead() throws Exception {
        try (RunningSluice s = sluice()) {
            Dns.udp(s.address(), withOpt(Dns.message(1, "www.example.org.", Type.A), false, 1232, List.of()));
            upstream.servfail("www.example.org.");
            clock.advanceMillis(3_600_000);
            int asked = upstream.udpQueries();
            for (int id = 2; id <= 3; id++) { // the second: the SERVFAIL did not replace the stale answer either
                Message stale = Dns.parse(Dns.udp(s.address(),
                        withOpt(Dns.message(id, "WWW.Example.org.", Type.A), false, 1232, List.of()), 3000));
                Dns.assertStale(stale, "the stale answer, not the upstream's SERVFAIL");
                assertEquals(id, stale.getHeader().getID());
                assertEquals("WWW.Example.org.", stale.getQuestion().getName().toString(), "the client's case");
                assertEquals("192.0.2.1", stale.getSection(Section.ANSWER).get(0).rdataToString());
            }
            assertEquals(2, count(s, "cache_stale_answers"));
            assertEquals(0, s.sluice().metrics().count("answers", "rcode", "SERVFAIL", "source", "upstream"),
                    "answers are counted as sent: the SERVFAIL never was");
            assertEquals(2, s.sluice().metrics().count("answers", "rcode", "NOERROR", "source", "cache"));
            assertEquals(asked + 1, upstream.udpQueries(), "asked once: the second, within stale-refresh-time, is not");
            upstream.servfail("never.example.org.");
            assertEquals(Rcode.SERVFAIL, Dns.rcode(Dns.udp(s.address(), Dns.query(4, "never.example.org.", Type.A), 3000)),
                    "nothing kept: the upstream's SERVFAIL");
            assertEquals(1, s.sluice().metrics().count("answers", "rcode", "SERVFAIL", "source", "upstream"),
                    "relayed, and counted as the upstream's (though kept servfail-ttl)");
            assertEquals(0, s.sluice().metrics().count("answers", "rcode", "SERVFAIL", "source", "cache"));
        }
    }

    @Test
    void afterAFailedRefreshTheStaleAnswerIsServedWithoutAskingForStaleRefreshTime() throws Exception {
        try (RunningSluice s = sluice()) {
            Dns.udp(s.address(), Dns.query(1, "www.example.org.", Type.A));
            upstream.servfail("www.example.org.");
            clock.advanceMillis(3_600_000);
            int asked = upstream.udpQueries();
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(2, "www.example.org.", Type.A))));
            assertEquals(asked + 1, upstream.udpQueries(), "the refresh was tried, and failed");
            clock.advanceMillis(29_000);
            Message stale = Dns.parse(Dns.udp(s.address(), Dns.query(3, "www.example.org.", Type.A)));
            assertEquals(30, stale.getSection(Section.ANSWER).get(0).getTTL(), "stale");
            assertEquals(asked + 1, upstream.udpQueries(), "within stale-refresh-time the upstreams are not asked");
            upstream.noServfail("www.example.org.");
            clock.advanceMillis(2_000);
            Message fresh = Dns.parse(Dns.udp(s.address(), Dns.query(4, "www.example.org.", Type.A)));
            assertEquals(asked + 2, upstream.udpQueries(), "then asked again");
            assertTrue(fresh.getSection(Section.ANSWER).get(0).getTTL() > 30, "and the fresh answer served");
            assertEquals(2, count(s, "cache_stale_answers"));
        }
    }

    @Test
    void whenMaxInflightIsFullAnExpiredAnswerIsServedStale() throws Exception {
        try (RunningSluice s = sluice("threads", "1", "max-inflight", "1");
             java.net.DatagramSocket client = new java.net.DatagramSocket()) {
            Dns.udp(s.address(), Dns.query(1, "www.example.org.", Type.A));
            upstream.mode(TestUpstream.Mode.SILENT);
            clock.advanceMillis(3_600_000);
            byte[] hold = Dns.query(2, "hold.example.org.", Type.A); // takes the one slot, and waits
            byte[] stale = Dns.query(3, "www.example.org.", Type.A);
            client.send(new java.net.DatagramPacket(hold, hold.length, s.address()));
            client.send(new java.net.DatagramPacket(stale, stale.length, s.address()));
            client.setSoTimeout(3000);
            byte[] buf = new byte[4096];
            java.net.DatagramPacket p = new java.net.DatagramPacket(buf, buf.length);
            client.receive(p);
            Message first = Dns.parse(Arrays.copyOf(buf, p.getLength()));
            assertEquals(3, first.getHeader().getID(), "the stale answer comes at once, before the held query's SERVFAIL");
            assertEquals(Rcode.NOERROR, first.getRcode());
            assertEquals(30, first.getSection(Section.ANSWER).get(0).getTTL());
            assertEquals(1, count(s, "inflight_full"));
            client.receive(p); // the held query's SERVFAIL: its slot is free again
            upstream.mode(TestUpstream.Mode.ANSWER);
            int asked = upstream.udpQueries();
            Dns.udp(s.address(), Dns.query(4, "www.example.org.", Type.A));
            assertEquals(asked + 1, upstream.udpQueries(),
                    "no upstream failed the name (none could be asked): it is asked again at once");
        }
    }

    @Test
    void clientSubnetQueriesShareAnswersOnlyWithinTheirNetworkAndCookiesAreNotReplayed() throws Exception {
        try (RunningSluice s = sluice()) {
            String scoped = "a." + TestUpstream.BY_NETWORK; // answered with the option, scope 24
            List<EDNSOption> ecs = List.of(new ClientSubnetOption(24, InetAddress.getByName("198.51.100.0")));
            Dns.udp(s.address(), withOpt(Dns.message(1, scoped, Type.A), false, 1232, ecs));
            Dns.udp(s.address(), withOpt(Dns.message(2, scoped, Type.A), false, 1232, ecs));
            assertEquals(1, asked(), "the same network: from the cache");
            List<EDNSOption> other = List.of(new ClientSubnetOption(24, InetAddress.getByName("198.51.101.0")));
            Dns.udp(s.address(), withOpt(Dns.message(3, scoped, Type.A), false, 1232, other));
            Dns.udp(s.address(), withOpt(Dns.message(4, scoped, Type.A), false, 1232, List.of()));
            assertEquals(3, asked(), "another network's answer, or one without, is never served");
            Dns.udp(s.address(), withOpt(Dns.message(5, "ecs.example.", Type.A), false, 1232, ecs));
            Dns.udp(s.address(), withOpt(Dns.message(6, "ecs.example.", Type.A), false, 1232, other));
            assertEquals(4, asked(), "an answer without the option is for every network (RFC 7871 section 7.3)");
            assertEquals(0, count(s, "cache_bypassed"));
        }
        // cookies answered by sluice are CookieTest's; here they pass, as they did before sluice answered them
        try (RunningSluice s = sluice("cookies.enabled", "false")) {
            int before = asked();
            byte[] clientA = "cookieA1".getBytes(StandardCharsets.US_ASCII);
            byte[] clientB = "cookieB2".getBytes(StandardCharsets.US_ASCII);
            Message first = Dns.parse(Dns.udp(s.address(), withOpt(Dns.message(3, "c.example.", Type.A), false, 1232,
                    List.of(new CookieOption(clientA)))));
            assertFalse(first.getOPT().getOptions(EDNSOption.Code.COOKIE).isEmpty(), "the upstream's server cookie");
            Message second = Dns.parse(Dns.udp(s.address(), withOpt(Dns.message(4, "c.example.", Type.A), false, 1232,
                    List.of(new CookieOption(clientB)))));
            assertEquals(before + 1, asked(), "a cookie does not change the answer: from the cache");
            assertEquals(0, count(s, "cache_bypassed"));
            assertNotNull(second.getOPT());
            assertTrue(second.getOPT().getOptions(EDNSOption.Code.COOKIE).isEmpty(),
                    "another client's server cookie is never replayed");
        }
    }

    @Test
    void anUpstreamsOptionsForOneClientAreNotServedToAnother() throws Exception {
        try (RunningSluice s = sluice()) {
            Message first = Dns.parse(Dns.udp(s.address(), withOpt(Dns.message(1, "nsid.example.", Type.A), false, 1232,
                    List.of(new GenericEDNSOption(EDNSOption.Code.NSID, new byte[0])))));
            assertEquals(1, first.getOPT().getOptions(EDNSOption.Code.NSID).size(), "relayed to the client that asked");
            Message second = Dns.parse(Dns.udp(s.address(), withOpt(Dns.message(2, "NSID.example.", Type.A), false, 1232,
                    List.of())));
            assertEquals(1, asked(), "the second from the cache");
            assertTrue(second.getOPT().getOptions(EDNSOption.Code.NSID).isEmpty(),
                    "an NSID goes only to a client that asked for it (RFC 5001)");
            assertEquals(1, second.getOPT().getOptions(EDNSOption.Code.EDNS_EXTENDED_ERROR).size(),
                    "an Extended DNS Error is about the answer: kept");
        }
    }

    @Test
    void theCacheStaysWithinItsBoundAndKeepsANameAskedAgain() throws Exception {
        try (RunningSluice s = sluice("cache.size", "100")) {
            for (int i = 0; i < 100; i++) { // a full cache
                Dns.udp(s.address(), Dns.query(i, "before" + i + ".example.", Type.A));
            }
            for (int round = 0; round < 5; round++) {
                Dns.udp(s.address(), Dns.query(round, "hot.example.", Type.A));
            }
            for (int i = 0; i < 600; i++) {
                Dns.udp(s.address(), Dns.query(i, "once" + i + ".example.", Type.A));
            }
            assertTrue(s.sluice().cache().size() <= 100, "entries " + s.sluice().cache().size());
            long dropped = count(s, "cache_evictions") + count(s, "cache_rejected");
            assertTrue(dropped >= 601, "evicted or not admitted: " + dropped); // 701 stored, 100 kept at most
            int before = asked();
            Dns.udp(s.address(), Dns.query(9, "hot.example.", Type.A));
            assertEquals(before, asked(), "the name asked five times outlived 700 asked once");
        }
    }

    /**
     * With cache.prefetch on, on one event loop, so that a query asked after another is handled
     * after it: a query for another name, answered, shows that nothing more reached the upstream
     * before it.
     */
    private RunningSluice prefetching(String... more) throws Exception {
        List<String> kv = new ArrayList<>(List.of("threads", "1", "cache.prefetch", "true"));
        kv.addAll(List.of(more));
        return sluice(kv.toArray(new String[0]));
    }

    private static int ttl(byte[] wire) throws Exception {
        return (int) Dns.parse(wire).getSection(Section.ANSWER).get(0).getTTL();
    }

    @Test
    void aHitInTheLastTenthOfItsLifetimeRefreshesTheAnswerBeforeItExpires() throws Exception {
        try (RunningSluice s = prefetching()) {
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
        try (RunningSluice s = prefetching()) {
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
        try (RunningSluice s = prefetching("limits.default.queries", "1", "limits.default.window", "1h")) {
            Dns.udp(s.address(), Dns.query(1, "www.budget.example.", Type.A));
            clock.advanceMillis(275_000);
            byte[] hit = Dns.udp(s.address(), Dns.query(2, "www.budget.example.", Type.A));
            assertEquals(Rcode.NOERROR, Dns.rcode(hit), "the client has its answer from the cache");
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(3, "other.example.", Type.A))));
            assertEquals(2, asked(), "the prefetch was over budget.example's budget: not sent");
            assertEquals(1, s.sluice().metrics().count("cache_prefetches"));
            assertEquals(0, s.sluice().metrics().count("limited"), "no client was refused");
            assertEquals(1, s.sluice().metrics().count("limited_prefetches"));
        }
    }

    @Test
    void aTcpClientsHitIsPrefetchedOverTcp() throws Exception {
        try (RunningSluice s = prefetching()) {
            Dns.tcp(s.address(), Dns.query(1, "tcp.example.", Type.A));
            assertEquals(1, upstream.tcpQueries());
            clock.advanceMillis(275_000);
            Message hit = Dns.parse(Dns.tcp(s.address(), Dns.query(2, "tcp.example.", Type.A)));
            assertEquals(25, hit.getSection(Section.ANSWER).get(0).getTTL());
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (upstream.tcpQueries() < 2 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertEquals(2, upstream.tcpQueries(), "the prefetch, over TCP as the answer it replaces was asked");
            assertEquals(0, upstream.udpQueries());
            assertEquals(1, s.sluice().metrics().count("cache_prefetches"));
        }
    }
}
