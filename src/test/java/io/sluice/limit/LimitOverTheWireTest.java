package io.sluice.limit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.ExtendedErrorCodeOption;
import org.xbill.DNS.Message;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Opcode;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** Limits end to end: real queries over UDP and TCP, a real upstream, time held still. */
class LimitOverTheWireTest {
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
        return RunningSluice.start(List.of(upstream), clock, b -> { }, keyValues);
    }

    @Test
    void twentyFiveQueriesWithLimitTenGiveTenAnswersAndFifteenRefusals() throws Exception {
        try (RunningSluice s = sluice("limits.default.queries", "10")) {
            for (boolean tcp : new boolean[] {false, true}) {
                int before = upstream.udpQueries() + upstream.tcpQueries();
                int answered = 0;
                int refused = 0;
                for (int i = 0; i < 25; i++) {
                    byte[] q = Dns.query(i, "host" + i + ".sub.example.com.", Type.A);
                    byte[] r = tcp ? Dns.tcp(s.address(), q) : Dns.udp(s.address(), q);
                    switch (Dns.rcode(r)) {
                        case Rcode.NOERROR -> answered++;
                        case Rcode.REFUSED -> refused++;
                        default -> throw new AssertionError("rcode " + Dns.rcode(r));
                    }
                }
                assertEquals(10, answered, tcp ? "tcp" : "udp");
                assertEquals(15, refused);
                assertEquals(10, upstream.udpQueries() + upstream.tcpQueries() - before, "refusals never go upstream");
                clock.advanceMillis(1000);
            }
            assertEquals(30, s.sluice().metrics().count("limited"));
        }
    }

    /** Query: ID 0xABCD, RD, "www.example.com" A, OPT (payload 4096, DO) with no options. */
    private static final String QUERY_WITH_OPT =
            "abcd 0100 0001 0000 0000 0001 03777777076578616d706c6503636f6d00 0001 0001 00 0029 1000 0000 8000 0000";

    private static byte[] hex(String s) {
        return HexFormat.of().parseHex(s.replace(" ", ""));
    }

    @Test
    void refusedAnswerByteByByte() throws Exception {
        try (RunningSluice s = sluice("limits.default.queries", "1")) {
            byte[] q = hex(QUERY_WITH_OPT);
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), q)));
            byte[] r = Dns.udp(s.address(), q);
            String text = "sluice: example.com over 1 queries per 1s";
            byte[] expected = hex("abcd 8185 0001 0000 0000 0001 03777777076578616d706c6503636f6d00 0001 0001"
                    + " 00 0029 04d0 0000 8000 " + String.format("%04x", 6 + text.length())
                    + " 000f " + String.format("%04x", 2 + text.length()) + " 0000"
                    + HexFormat.of().formatHex(text.getBytes()));
            assertArrayEquals(expected, r);
            assertTrue(r.length <= q.length + 6 + text.length(), "no larger than the query plus the EDE");
            ExtendedErrorCodeOption ede = (ExtendedErrorCodeOption) new Message(r).getOPT().getOptions().get(0);
            assertEquals(text, ede.getText());
        }
    }

    @Test
    void anAnswerSluiceMakesToAnEdnsVersionItDoesNotKnowIsBadvers() throws Exception {
        try (RunningSluice s = sluice("limits.default.queries", "1")) {
            Message m = Dns.message(7, "v1.example.com.", Type.A);
            m.addRecord(new OPTRecord(1232, 0, 1, 0), Section.ADDITIONAL);
            byte[] q = m.toWire();
            Dns.udp(s.address(), q); // forwarded: the upstream's to answer
            Message r = new Message(Dns.udp(s.address(), q)); // over the limit: sluice's answer
            assertEquals(Rcode.BADVERS, r.getRcode(), "RFC 6891 section 6.1.3, as Unbound");
            assertEquals(0, r.getHeader().getRcode(), "the header's four bits; the rest in the OPT");
            assertEquals(0, r.getOPT().getVersion(), "the version sluice knows");
            assertTrue(r.getOPT().getOptions().isEmpty(), "no text about a refusal it is not");
            Message update = Dns.message(8, "v1.example.com.", Type.A);
            update.getHeader().setOpcode(Opcode.UPDATE);
            update.addRecord(new OPTRecord(1232, 0, 1, 0), Section.ADDITIONAL);
            assertEquals(Rcode.BADVERS, new Message(Dns.udp(s.address(), update.toWire())).getRcode(), "not NOTIMP");
            assertEquals(2, s.sluice().metrics().count("answers", "rcode", "BADVERS", "source", "sluice"),
                    "the refusal's and the NOTIMP's, counted as BADVERS, not as the NOERROR their header says");
        }
    }

    @Test
    void withoutEdnsTheAnswerCarriesNoOpt() throws Exception {
        try (RunningSluice s = sluice("limits.default.queries", "1", "action", "nxdomain")) {
            byte[] q = Dns.query(0x0102, "a.example.org.", Type.MX);
            Dns.udp(s.address(), q);
            byte[] r = Dns.udp(s.address(), q);
            byte[] expected = hex("0102 8183 0001 0000 0000 0000 01610765 78616d706c65036f726700 000f 0001");
            assertArrayEquals(expected, r);
        }
    }

    /** Two /24s under one /8 have budgets of their own, where the suffix list would make them one. */
    @Test
    void reverseNamesCountPerSlash24() throws Exception {
        try (RunningSluice s = sluice("limits.default.queries", "2")) {
            for (String net : new String[] {"1.0.192", "2.0.192"}) {
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(1, "1." + net + ".in-addr.arpa.", Type.PTR))));
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(2, "2." + net + ".in-addr.arpa.", Type.PTR))));
            }
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.udp(s.address(), Dns.query(3, "3.2.0.192.in-addr.arpa.", Type.PTR))));
        }
    }

    /**
     * Each client network has its own budget per domain on top of the domain's, and a query its
     * client's budget refuses spends none of the domain's. Clients from two /24s of loopback.
     */
    @Test
    void perClientBudgetsComeOnTopAndSpendNothingWhenTheyRefuse() throws Exception {
        try (RunningSluice s = sluice("limits.default.queries", "4", "limits.per-client.queries", "2")) {
            java.net.InetAddress a = java.net.InetAddress.getByName("127.0.0.1");
            java.net.InetAddress b = java.net.InetAddress.getByName("127.0.1.1");
            assertEquals(Rcode.NOERROR, rcodeFrom(a, s, "a1.example.com."));
            assertEquals(Rcode.NOERROR, rcodeFrom(a, s, "a2.example.com."));
            assertEquals(Rcode.REFUSED, rcodeFrom(a, s, "a3.example.com."), "a's own budget");
            assertEquals(Rcode.NOERROR, rcodeFrom(b, s, "b1.example.com."), "the domain's is not spent by a's refusal");
            assertEquals(Rcode.NOERROR, rcodeFrom(b, s, "b2.example.com."));
            assertEquals(Rcode.REFUSED, rcodeFrom(b, s, "b3.example.com."));
            assertEquals(Rcode.NOERROR, rcodeFrom(a, s, "x.example.net."), "another domain, another budget");
            assertEquals(2, s.sluice().metrics().count("limited_per_client"));
        }
    }

    private static int rcodeFrom(java.net.InetAddress from, RunningSluice s, String name) throws Exception {
        try (java.net.DatagramSocket socket = new java.net.DatagramSocket(new java.net.InetSocketAddress(from, 0))) {
            socket.setSoTimeout(2000);
            byte[] q = Dns.query(7, name, Type.A);
            socket.send(new java.net.DatagramPacket(q, q.length, s.address()));
            java.net.DatagramPacket p = new java.net.DatagramPacket(new byte[512], 512);
            socket.receive(p);
            return Dns.rcode(java.util.Arrays.copyOf(p.getData(), p.getLength()));
        }
    }

    @Test
    void dropSendsNothing() throws Exception {
        try (RunningSluice s = sluice("limits.default.queries", "1", "action", "drop")) {
            byte[] q = Dns.query(1, "d.example.net.", Type.A);
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), q)));
            assertNull(Dns.udp(s.address(), q, 300));
            assertEquals(1, s.sluice().metrics().count("limited"));
        }
    }

    @Test
    void truncateSetsTcOverUdpAndRefusesOverTcp() throws Exception {
        try (RunningSluice s = sluice("limits.default.queries", "1", "action", "truncate")) {
            byte[] q = Dns.query(0x0A0A, "t.example.", Type.A);
            Dns.udp(s.address(), q);
            byte[] udp = Dns.udp(s.address(), q);
            assertArrayEquals(hex("0a0a 8380 0001 0000 0000 0000 017407 6578616d706c6500 0001 0001"), udp);
            byte[] tcp = Dns.tcp(s.address(), q);
            assertArrayEquals(hex("0a0a 8185 0001 0000 0000 0000 017407 6578616d706c6500 0001 0001"), tcp);
            assertEquals(1, s.sluice().metrics().count("limited", "action", "truncate"));
            assertEquals(1, s.sluice().metrics().count("limited", "action", "refused"), "by the action that answered");
        }
    }

    @Test
    void dryRunForwardsEverythingAndCountsWhatItWouldRefuse() throws Exception {
        try (RunningSluice s = sluice("limits.default.queries", "2", "dry-run", "true")) {
            for (int i = 0; i < 6; i++) {
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(i, "dry.example.", Type.A))));
            }
            assertEquals(6, upstream.udpQueries());
            assertEquals(4, s.sluice().metrics().count("limited_dry_run"));
            assertEquals(0, s.sluice().metrics().count("limited"));
        }
    }

    @Test
    void exemptClientsAreNeverLimited() throws Exception {
        try (RunningSluice s = RunningSluice.start(List.of(upstream), clock,
                b -> b.set("limits.exempt-clients", List.of("10.0.0.0/8", "127.0.0.0/30")),
                "limits.default.queries", "1")) {
            for (int i = 0; i < 5; i++) {
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(i, "ex.example.", Type.A))));
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.tcp(s.address(), Dns.query(i, "ex.example.", Type.A))));
            }
        }
    }

    @Test
    void overridesByRegistrableDomain() throws Exception {
        try (RunningSluice s = RunningSluice.start(List.of(upstream), clock, b -> {
            b.domain("example.com", "3", "1s");
            b.domain("trusted.example", "unlimited", null);
        }, "limits.default.queries", "1")) {
            int[] rcodes = new int[5];
            for (int i = 0; i < 5; i++) {
                rcodes[i] = Dns.rcode(Dns.udp(s.address(), Dns.query(i, "w" + i + ".example.com.", Type.A)));
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(i, "t.trusted.example.", Type.A))));
            }
            assertEquals("[0, 0, 0, 5, 5]", Arrays.toString(rcodes));
        }
    }

    /** Queries carry A-labels: an override written in Unicode must limit them. */
    @Test
    void aUnicodeOverrideLimitsTheQueriesOfItsALabels() throws Exception {
        try (RunningSluice s = RunningSluice.start(List.of(upstream), clock, b -> b.domain("bücher.de", "2", "1s"))) {
            int[] rcodes = new int[3];
            for (int i = 0; i < 3; i++) {
                rcodes[i] = Dns.rcode(Dns.udp(s.address(), Dns.query(i, "www.xn--bcher-kva.de.", Type.A)));
            }
            assertEquals("[0, 0, 5]", Arrays.toString(rcodes));
        }
    }
}
