package io.sluice.forward;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.xbill.DNS.CookieOption;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.Flags;
import org.xbill.DNS.GenericEDNSOption;
import org.xbill.DNS.Message;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.TcpKeepaliveOption;
import org.xbill.DNS.Type;

/** Forwarding over real loopback sockets to a real in-test upstream. */
class ForwardingTest {
    private TestUpstream upstream;
    private RunningSluice sluice;

    @BeforeEach
    void start() throws Exception {
        upstream = new TestUpstream();
        sluice = RunningSluice.start(List.of(upstream), "timeout", "500ms");
    }

    @AfterEach
    void stop() throws Exception {
        sluice.close();
        upstream.close();
    }

    @ParameterizedTest
    @ValueSource(ints = {Type.A, Type.AAAA, Type.MX, Type.TXT})
    void udpAnswerIsTheUpstreamsByteForByte(int type) throws Exception {
        byte[] query = Dns.query(0x1234, "www.example.", type);
        byte[] direct = Dns.udp(upstream.address(), query);
        byte[] forwarded = Dns.udp(sluice.address(), query);
        assertNotNull(forwarded);
        assertArrayEquals(direct, forwarded);
        assertEquals(1, Dns.parse(forwarded).getSection(Section.ANSWER).size());
    }

    @ParameterizedTest
    @ValueSource(ints = {Type.A, Type.AAAA, Type.MX, Type.TXT})
    void tcpAnswerIsTheUpstreamsByteForByte(int type) throws Exception {
        byte[] query = Dns.query(0x4321, "mail.example.", type);
        byte[] direct = Dns.tcp(upstream.address(), query);
        byte[] forwarded = Dns.tcp(sluice.address(), query);
        assertArrayEquals(direct, forwarded);
        assertTrue(upstream.tcpQueries() >= 2, "the TCP query went upstream over TCP");
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 0x7FFF, 0xBEEF, 0xFFFF})
    void theClientsIdComesBackWhileUpstreamSeesAnother(int id) throws Exception {
        byte[] reply = Dns.udp(sluice.address(), Dns.query(id, "id.example.", Type.A));
        assertEquals(id, Dns.id(reply));
        byte[] tcpReply = Dns.tcp(sluice.address(), Dns.query(id, "id.example.", Type.A));
        assertEquals(id, Dns.id(tcpReply));
    }

    @Test
    void aTcpAnswerTellsSluicesOwnIdleTimeoutNotTheUpstreams() throws Exception {
        Message q = Dns.message(0x2222, "keepalive.example.", Type.A);
        q.addRecord(new OPTRecord(1232, 0, 0, 0, List.of(new TcpKeepaliveOption())), Section.ADDITIONAL);
        Message direct = Dns.parse(Dns.tcp(upstream.address(), q.toWire()));
        Message relayed = Dns.parse(Dns.tcp(sluice.address(), q.toWire()));
        assertEquals(TestUpstream.KEEPALIVE_TIMEOUT, keepalive(direct));
        assertEquals(100, keepalive(relayed), "tcp-idle-timeout 10s, in 100 ms units (RFC 7828)");
        assertEquals(direct.getSection(Section.ANSWER), relayed.getSection(Section.ANSWER));
    }

    private static int keepalive(Message m) {
        List<EDNSOption> options = m.getOPT().getOptions(EDNSOption.Code.TCP_KEEPALIVE);
        assertEquals(1, options.size());
        return ((TcpKeepaliveOption) options.get(0)).getTimeout().orElseThrow();
    }

    @Test
    void answersSentTogetherReachTheirClientWhole() throws Exception {
        // From the cache, what one wake-up reads is answered in it: its first answer at once, the
        // rest after the wake-up's reads (WriteBatch). Single queries take the first way, pairs
        // sent back to back and bursts of 40 mostly the second. Each answer must come once, under
        // its own ID, with its own name.
        int n = 40;
        try (RunningSluice cached = RunningSluice.start(List.of(upstream), "cache.size", "1000");
             DatagramSocket c = new DatagramSocket()) {
            for (int i = 0; i < n; i++) {
                Dns.udp(cached.address(), Dns.query(i, "burst" + i + ".example.", Type.A));
            }
            int asked = upstream.udpQueries();
            c.connect(cached.address());
            c.setSoTimeout(2000);
            for (int round = 0; round < 3; round++) {
                sendAndCheck(c, round * 1000, 0, n);
            }
            for (int i = 0; i < n; i += 2) {
                sendAndCheck(c, 5000, i, 2);
            }
            assertEquals(asked, upstream.udpQueries(), "every answer came from the cache");
        }
    }

    /** Sends queries for names {@code first}.. {@code first + count - 1} at once, then checks their answers. */
    private static void sendAndCheck(DatagramSocket c, int idBase, int first, int count) throws Exception {
        for (int i = first; i < first + count; i++) {
            byte[] q = Dns.query(idBase + i, "burst" + i + ".example.", Type.A);
            c.send(new DatagramPacket(q, q.length));
        }
        Set<Integer> ids = new HashSet<>();
        byte[] buf = new byte[4096];
        for (int k = 0; k < count; k++) {
            DatagramPacket p = new DatagramPacket(buf, buf.length);
            c.receive(p);
            Message m = Dns.parse(Arrays.copyOf(buf, p.getLength()));
            int id = m.getHeader().getID();
            assertEquals("burst" + (id - idBase) + ".example.", m.getQuestion().getName().toString());
            assertTrue(ids.add(id), "answered once: " + id);
        }
    }

    @Test
    void upstreamIdsAreRandomisedPerQuery() throws Exception {
        int same = 0;
        for (int i = 0; i < 20; i++) {
            Dns.udp(sluice.address(), Dns.query(7, "r" + i + ".example.", Type.A));
            if (Dns.id(upstream.lastQuery()) == 7) {
                same++;
            }
        }
        assertTrue(same < 3, "upstream saw the client's ID " + same + " times of 20");
    }

    @Test
    void queriesReadApartLeaveFromSeveralSourcePorts() throws Exception {
        // Each query waits for its answer, so each is a read batch of its own, and each batch
        // draws one of the 8 upstream sockets at random: 40 draws find at least 4 of them unless
        // the draw is broken (the chance otherwise is below 1e-15).
        Set<Integer> ports = new HashSet<>();
        for (int i = 0; i < 40; i++) {
            Dns.udp(sluice.address(), Dns.query(i, "port" + i + ".example.", Type.A));
            ports.add(upstream.lastSender().getPort());
        }
        assertTrue(ports.size() >= 4, "source ports seen: " + ports);
    }

    @Test
    void ednsOptionsReachTheUpstreamUntouched() throws Exception {
        byte[] query = Dns.queryWithOpt(99, "edns.example.", Type.A,
                List.of(new GenericEDNSOption(65001, new byte[] {1, 2, 3, 4, 5})));
        byte[] reply = Dns.udp(sluice.address(), query);
        byte[] seen = upstream.lastQuery();
        assertEquals(query.length, seen.length);
        assertArrayEquals(lowerCase(Arrays.copyOfRange(query, 2, query.length)),
                lowerCase(Arrays.copyOfRange(seen, 2, seen.length)),
                "all but the ID, and the case of the name's letters (randomize-case), is the client's bytes");
        assertNotNull(Dns.parse(reply).getOPT(), "the upstream's OPT comes back");
    }

    @Test
    void largeAnswerIsTruncatedOverUdpAndWholeOverTcp() throws Exception {
        byte[] query = Dns.query(5, TestUpstream.BIG, Type.TXT);
        Message udp = Dns.parse(Dns.udp(sluice.address(), query));
        assertTrue(udp.getHeader().getFlag(Flags.TC), "TC set over UDP");
        Message tcp = Dns.parse(Dns.tcp(sluice.address(), query));
        assertEquals(false, tcp.getHeader().getFlag(Flags.TC));
        assertEquals(1, tcp.getSection(Section.ANSWER).size());
        assertTrue(tcp.toWire().length > 2500);
    }

    @Test
    void aUdpReplyAsLargeAsTheClientAllowsPassesWholeUpToMaxUdpSize() throws Exception {
        Message m = Dns.message(8, TestUpstream.HUGE, Type.TXT);
        m.addRecord(new OPTRecord(65000, 0, 0), Section.ADDITIONAL);
        byte[] query = m.toWire();
        byte[] direct = Dns.udp(upstream.address(), query);
        assertTrue(direct.length > 5000, "the upstream sends it whole over UDP");
        Message capped = Dns.parse(Dns.udp(sluice.address(), query));
        assertTrue(capped.getHeader().getFlag(Flags.TC), "asked upstream as 1232 bytes (max-udp-size): TC");
        try (RunningSluice large = RunningSluice.start(List.of(upstream), "max-udp-size", "65535")) {
            assertArrayEquals(direct, Dns.udp(large.address(), query));
        }
    }

    /** An upstream that takes no notice of the size: its answer cut by sluice, in the client's case, under its header. */
    @Test
    void aUdpReplyLargerThanTheClientTakesIsCutUnderTheUpstreamsHeader() throws Exception {
        upstream.ignoresPayloadSize(true);
        byte[] query = Dns.query(9, "HuGe.ExAmPlE.", Type.TXT);
        byte[] direct = Dns.udp(upstream.address(), query);
        assertTrue(direct.length > 5000, "the upstream sends it whole over UDP");
        byte[] cut = Dns.udp(sluice.address(), query);
        Message m = Dns.parse(cut);
        assertTrue(m.getHeader().getFlag(Flags.TC), "TC");
        assertEquals(0, m.getSection(Section.ANSWER).size());
        assertArrayEquals(Arrays.copyOfRange(query, 12, query.length), Arrays.copyOfRange(cut, 12, cut.length),
                "the client's question, in the letters it wrote, and nothing else");
        assertEquals(direct[2] | 0x02, cut[2], "the upstream's flags, TC added");
        assertEquals(direct[3], cut[3], "the upstream's RA and RCODE");
        assertEquals(1, sluice.sluice().metrics().count("upstream_answers_truncated"));
    }

    @Test
    void nxdomainPassesThrough() throws Exception {
        byte[] reply = Dns.udp(sluice.address(), Dns.query(6, TestUpstream.NX, Type.A));
        assertEquals(Rcode.NXDOMAIN, Dns.rcode(reply));
    }

    @Test
    void anUpstreamsExtendedRcodeIsCountedWhole() throws Exception {
        Message v1 = Dns.message(7, "v.example.", Type.A);
        v1.addRecord(new OPTRecord(1232, 0, 1), Section.ADDITIONAL);
        Message badVersion = Dns.parse(Dns.udp(sluice.address(), v1.toWire()));
        assertEquals(Rcode.BADVERS, badVersion.getRcode(), "relayed as the upstream gave it");
        Message cookie = Dns.message(8, "x." + TestUpstream.BAD_COOKIE, Type.A);
        cookie.addRecord(new OPTRecord(1232, 0, 0), Section.ADDITIONAL);
        assertEquals(Rcode.BADCOOKIE, Dns.parse(Dns.udp(sluice.address(), cookie.toWire())).getRcode());
        Dns.udp(sluice.address(), Dns.query(9, "plain.example.", Type.A));
        assertEquals(1, sluice.sluice().metrics().count("answers", "rcode", "BADVERS", "source", "upstream"),
                "not the NOERROR its header says");
        assertEquals(1, sluice.sluice().metrics().count("answers", "rcode", "BADCOOKIE", "source", "upstream"),
                "not the YXRRSET its header says");
        assertEquals(1, sluice.sluice().metrics().count("answers", "rcode", "NOERROR", "source", "upstream"));
        assertEquals(0, sluice.sluice().metrics().count("answers", "rcode", "YXRRSET", "source", "upstream"));
    }

    @Test
    void forgedRepliesAreIgnoredAndCounted() throws Exception {
        upstream.mode(TestUpstream.Mode.FORGE_FIRST);
        byte[] query = Dns.query(77, "genuine.example.", Type.A);
        Message reply = Dns.parse(Dns.udp(sluice.address(), query));
        assertEquals("genuine.example.", reply.getQuestion().getName().toString());
        assertEquals(1, reply.getSection(Section.ANSWER).size());
        Message tcp = Dns.parse(Dns.tcp(sluice.address(), query));
        assertEquals("genuine.example.", tcp.getQuestion().getName().toString());
        var m = sluice.sluice().metrics();
        assertTrue(m.count("replies_unexpected") >= 2, "wrong IDs counted over UDP and TCP: " + m);
        // The genuine bytes sent from a wrong source port never reach sluice: upstream sockets are
        // connected, so the kernel drops them before any check of sluice's.
        assertTrue(m.count("replies_mismatched") >= 2, "wrong questions counted over UDP and TCP: " + m);
    }

    @Test
    void thousandConcurrentQueriesAreAllAnswered() throws Exception {
        int n = 1000;
        upstream.holdUntil(n); // every reply waits until all 1000 are in flight at once
        Concurrent.Result r = Concurrent.udp(sluice.address(), n, 10, upstream::udpQueries);
        assertEquals(n, r.answered(), r.toString());
        assertEquals(0, r.wrongAnswers(), r.toString());
    }

    @Test
    void manyQueriesOnOneTcpConnectionAreAllAnswered() throws Exception {
        assertEquals(200, Concurrent.tcpPipelined(sluice.address(), 200));
    }

    /** {@code dig +header-only}: no question, an OPT with a client cookie (RFC 7873 section 5.4). */
    @Test
    void aCookieQueryWithoutAQuestionIsForwarded() throws Exception {
        Message m = new Message(0x0C0C);
        byte[] clientCookie = {9, 8, 7, 6, 5, 4, 3, 2};
        m.addRecord(new OPTRecord(1232, 0, 0, 0, List.of(new CookieOption(clientCookie))), Section.ADDITIONAL);
        for (boolean tcp : new boolean[] {false, true}) {
            byte[] reply = tcp ? Dns.tcp(sluice.address(), m.toWire()) : Dns.udp(sluice.address(), m.toWire());
            Message r = Dns.parse(reply);
            assertEquals(0x0C0C, r.getHeader().getID());
            assertEquals(Rcode.NOERROR, r.getRcode(), "not FORMERR");
            CookieOption c = (CookieOption) r.getOPT().getOptions().get(0);
            assertArrayEquals(clientCookie, c.getClientCookie());
            assertTrue(c.getServerCookie().isPresent(), "the upstream's server cookie comes back");
        }
    }

    @Test
    void aUdpQueryLargerThan4096BytesIsForwardedWhole() throws Exception {
        byte[] query = Dns.queryWithOpt(0x5000, "padded.example.", Type.A,
                List.of(new GenericEDNSOption(12, new byte[6000]))); // RFC 7830 padding
        byte[] reply = Dns.udp(sluice.address(), query, 2000);
        assertNotNull(reply, "answered, not timed out");
        assertEquals(Rcode.NOERROR, Dns.rcode(reply));
        assertEquals(query.length, upstream.lastQuery().length, "the whole datagram went upstream");
    }

    /** ASCII letters in lower case; every other byte as it was. */
    private static byte[] lowerCase(byte[] b) {
        byte[] out = b.clone();
        for (int i = 0; i < out.length; i++) {
            if (out[i] >= 'A' && out[i] <= 'Z') {
                out[i] += 'a' - 'A';
            }
        }
        return out;
    }
}
