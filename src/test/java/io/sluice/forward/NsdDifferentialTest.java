package io.sluice.forward;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.limit.Clock;
import io.sluice.testing.Dns;
import io.sluice.testing.NsdServer;
import io.sluice.testing.RunningSluice;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.SOARecord;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * sluice in front of a real nsd serving a signed zone with every kind of record: each answer
 * through sluice is nsd's own, byte for byte (the ID is the client's both ways), over UDP and TCP,
 * with and without EDNS; zone transfers come through whole, message by message.
 */
class NsdDifferentialTest {
    @TempDir
    static Path dir;
    private static NsdServer nsd;
    private static RunningSluice sluice;

    @BeforeAll
    static void start() throws Exception {
        nsd = NsdServer.start(dir);
        sluice = RunningSluice.startFor(List.of(nsd.hostPort()), Clock.system(), b -> { }, "timeout", "2s");
    }

    @AfterAll
    static void stop() throws Exception {
        if (sluice != null) {
            sluice.close();
        }
        if (nsd != null) {
            nsd.close();
        }
    }

    /** How a query is sent: transport and EDNS. */
    enum Way { UDP, UDP_EDNS, UDP_EDNS_DO, TCP, TCP_EDNS_DO }

    static Stream<Arguments> questions() {
        String[][] q = {
            {"diff.test.", "SOA"}, {"diff.test.", "NS"}, {"diff.test.", "A"}, {"diff.test.", "AAAA"},
            {"diff.test.", "MX"}, {"diff.test.", "TXT"}, {"diff.test.", "CAA"}, {"diff.test.", "NAPTR"},
            {"diff.test.", "DNSKEY"}, {"diff.test.", "NSEC"}, {"diff.test.", "ANY"},
            {"www.diff.test.", "A"}, {"WwW.DiFf.TeSt.", "AAAA"}, {"www.diff.test.", "MX"},
            {"c1.diff.test.", "A"}, {"c3.diff.test.", "CNAME"},
            {"foo.wild.diff.test.", "A"}, {"a.b.wild.diff.test.", "TXT"},
            {"www.dn.diff.test.", "A"}, {"x.dn.diff.test.", "A"}, {"dn.diff.test.", "DNAME"},
            {"host.sub.diff.test.", "A"}, {"sub.diff.test.", "NS"},
            {"unk.diff.test.", "TYPE65280"}, {"big.diff.test.", "TXT"}, {"hinfo.diff.test.", "HINFO"},
            {"ssh.diff.test.", "SSHFP"}, {"_443._tcp.www.diff.test.", "TLSA"}, {"_sip._tcp.diff.test.", "SRV"},
            {"nope.diff.test.", "A"}, {"h150.diff.test.", "TXT"}, {"not-in-any-zone.example.", "A"},
        };
        List<Arguments> out = new ArrayList<>();
        for (String[] one : q) {
            for (Way way : Way.values()) {
                out.add(Arguments.of(one[0], one[1], way));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("questions")
    void answersAreNsdsByteForByte(String name, String type, Way way) throws Exception {
        Message m = Dns.message(0x2A2A, name, Type.value(type));
        if (way == Way.UDP_EDNS) {
            m.addRecord(new OPTRecord(1232, 0, 0), Section.ADDITIONAL);
        } else if (way == Way.UDP_EDNS_DO || way == Way.TCP_EDNS_DO) {
            m.addRecord(new OPTRecord(4096, 0, 0, 0x8000), Section.ADDITIONAL);
        }
        byte[] query = m.toWire();
        boolean tcp = way == Way.TCP || way == Way.TCP_EDNS_DO;
        byte[] direct = tcp ? Dns.tcp(nsd.address(), query) : Dns.udp(nsd.address(), query);
        byte[] relayed = tcp ? Dns.tcp(sluice.address(), query) : Dns.udp(sluice.address(), query);
        assertNotNull(direct);
        assertArrayEquals(direct, relayed);
    }

    /** Queries nsd cannot parse: it answers without a question, and sluice relays just that. */
    static Stream<Arguments> malformed() {
        String header = "2a2a0100";
        String www = "03777777046469666604746573740000010001"; // www.diff.test A IN
        String opt = "0000291000000000000000";
        return Stream.of(
                Arguments.of("two OPT records", header + "000100000000" + "0002" + www + opt + opt),
                Arguments.of("an OPT with a non-root owner", header + "000100000000" + "0001" + www
                        + "03777777000029100000000000" + "0000"),
                Arguments.of("ARCOUNT past the end", header + "000100000000" + "0001" + www),
                Arguments.of("ANCOUNT=1 in a query", header + "000100010000" + "0000" + www),
                Arguments.of("RCODE bits set in a query", "2a2a0105" + "000100000000" + "0000" + www),
                Arguments.of("QCLASS NONE", header + "000100000000" + "0000" + www.substring(0, www.length() - 4) + "00fe"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void nsdsQuestionLessErrorsAreRelayedAsTheyCame(String what, String hex) throws Exception {
        byte[] query = HexFormat.of().parseHex(hex);
        for (boolean tcp : new boolean[] {false, true}) {
            byte[] direct = tcp ? Dns.tcp(nsd.address(), query) : Dns.udp(nsd.address(), query);
            long start = System.nanoTime();
            byte[] relayed = tcp ? Dns.tcp(sluice.address(), query) : Dns.udp(sluice.address(), query);
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertEquals(0, direct[5], what + ": nsd answers without a question");
            assertArrayEquals(direct, relayed, what);
            assertTrue(ms < 1500, what + ": relayed after " + ms + " ms, not at the 2 s timeout");
        }
    }

    /**
     * nsd answers an IXFR without an SOA in its authority section with a bare 12-byte FORMERR
     * header that counts a question: relayed at once as that error with the client's question,
     * and, a reply to an ID sent, never a failure of the upstream, however many come.
     */
    @Test
    void anErrorHeaderWithoutItsQuestionIsRelayedAtOnceAndNeverMarksTheUpstreamDown() throws Exception {
        byte[] ixfr = Dns.query(0x1F1F, "DiFf.TeSt.", Type.IXFR);
        byte[] direct = Dns.udp(nsd.address(), ixfr);
        assertEquals(12, direct.length, "nsd: a header alone");
        assertEquals(Rcode.FORMERR, Dns.rcode(direct));
        assertEquals(1, direct[5], "that counts a question");
        for (int i = 0; i < 4; i++) { // more than max-fails
            for (boolean tcp : new boolean[] {false, true}) {
                long start = System.nanoTime();
                byte[] relayed = tcp ? Dns.tcp(sluice.address(), ixfr) : Dns.udp(sluice.address(), ixfr);
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertTrue(ms < 1500, "relayed after " + ms + " ms, not at the 2 s timeout");
                assertArrayEquals(direct, Arrays.copyOf(relayed, 12), "nsd's header");
                assertArrayEquals(Arrays.copyOfRange(ixfr, 12, ixfr.length), Arrays.copyOfRange(relayed, 12, relayed.length),
                        "the client's question, in its case");
            }
        }
        assertEquals(0, sluice.sluice().metrics().count("upstream_timeouts", "upstream", nsd.hostPort()));
        assertEquals(0, sluice.sluice().metrics().count("servfail"));
    }

    /** A query nsd calls FORMERR for a record that runs past its end gets FORMERR from sluice itself. */
    @Test
    void aQueryWhoseOptRunsPastItsEndGetsFormerrWithAnOpt() throws Exception {
        String www = "03777777046469666604746573740000010001";
        for (String opt : new String[] {"0000290400000000000014", "000029040000000000000400080008"}) { // RDLENGTH past the end; an option past RDLENGTH
            byte[] query = HexFormat.of().parseHex("2a2a0100000100000000" + "0001" + www + opt);
            assertEquals(Rcode.FORMERR, Dns.rcode(Dns.udp(nsd.address(), query)));
            long before = sluice.sluice().metrics().count("forwarded");
            Message formerr = Dns.parse(Dns.udp(sluice.address(), query));
            assertEquals(Rcode.FORMERR, formerr.getRcode());
            assertNotNull(formerr.getOPT(), "with an OPT, as the query had one");
            assertEquals(before, sluice.sluice().metrics().count("forwarded"), "sluice's own: not forwarded");
        }
    }

    @Test
    void anAxfrComesThroughWholeAndTheConnectionGoesOn() throws Exception {
        byte[] axfr = Dns.query(0x0AF0, NsdServer.ZONE, Type.AXFR);
        List<byte[]> direct = transfer(nsd.address(), axfr);
        assertTrue(direct.size() >= 3, "the zone spans several messages: " + direct.size());
        try (Socket s = new Socket(sluice.address().getAddress(), sluice.address().getPort())) {
            s.setSoTimeout(5000);
            Dns.writeFrame(s, axfr);
            for (int i = 0; i < direct.size(); i++) {
                assertArrayEquals(direct.get(i), Dns.readFrame(s), "message " + (i + 1) + " of " + direct.size());
            }
            Dns.writeFrame(s, Dns.query(7, "www.diff.test.", Type.A));
            byte[] after = Dns.readFrame(s);
            assertEquals(7, Dns.id(after), "the next query on the connection is answered");
            assertEquals(Rcode.NOERROR, Dns.rcode(after));
        }
        assertEquals(0, sluice.sluice().metrics().count("transfers_aborted"));
    }

    @Test
    void anIxfrComesThroughWhole() throws Exception {
        for (long serial : new long[] {1, 2024010101L}) { // old: the zone follows; current: one SOA
            Message m = Dns.message(0x1F1F, NsdServer.ZONE, Type.IXFR);
            Name zone = Name.fromString(NsdServer.ZONE);
            m.addRecord(new SOARecord(zone, DClass.IN, 0, zone, zone, serial, 0, 0, 0, 0), Section.AUTHORITY);
            List<byte[]> direct = transfer(nsd.address(), m.toWire());
            List<byte[]> relayed = transfer(sluice.address(), m.toWire());
            assertEquals(direct.size(), relayed.size(), "serial " + serial);
            for (int i = 0; i < direct.size(); i++) {
                assertArrayEquals(direct.get(i), relayed.get(i), "serial " + serial + ", message " + (i + 1));
            }
        }
    }

    /** A transfer is one query: it spends one of its domain's budget, however many messages. */
    @Test
    void aTransferCountsOnceAgainstItsDomain() throws Exception {
        try (RunningSluice limited = RunningSluice.startFor(List.of(nsd.hostPort()), Clock.system(), b -> { },
                "limits.default.queries", "2", "limits.default.window", "1h")) {
            List<byte[]> whole = transfer(limited.address(), Dns.query(1, NsdServer.ZONE, Type.AXFR));
            assertTrue(whole.size() >= 3, "all of it: " + whole.size() + " messages");
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(limited.address(), Dns.query(2, "www.diff.test.", Type.A))));
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.udp(limited.address(), Dns.query(3, "www.diff.test.", Type.A))));
        }
    }

    /**
     * The messages of one transfer on a new connection, read until the SOA that opened it comes
     * again (or, for an IXFR answered by one SOA, that one message).
     */
    private static List<byte[]> transfer(InetSocketAddress server, byte[] query) throws IOException {
        List<byte[]> messages = new ArrayList<>();
        try (Socket s = new Socket(server.getAddress(), server.getPort())) {
            s.setSoTimeout(5000);
            Dns.writeFrame(s, query);
            int soas = 0;
            int records = 0;
            while (true) {
                byte[] frame = Dns.readFrame(s);
                messages.add(frame);
                for (Record r : Dns.parse(frame).getSection(Section.ANSWER)) {
                    records++;
                    soas += r.getType() == Type.SOA ? 1 : 0;
                }
                if (soas >= 2 || records == 1) {
                    return messages;
                }
            }
        }
    }
}
