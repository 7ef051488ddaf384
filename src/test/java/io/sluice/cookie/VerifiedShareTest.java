package io.sluice.cookie;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.limit.ManualClock;
import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import io.sluice.testing.UnboundServer;
import java.net.DatagramSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xbill.DNS.CookieOption;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * Clients that prove their address against a flood of forged sources: limits.verified-share, the
 * per-client budgets split by proof, and slip. Time is held still, so each test runs in one window.
 */
class VerifiedShareTest {
    private static final byte[] CLIENT = "realone1".getBytes(StandardCharsets.US_ASCII);

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

    /** The cookie sluice gives a client that asks for one alone (no question: no budget spent). */
    private static CookieOption cookieFor(RunningSluice s) throws Exception {
        Message ask = new Message(7);
        ask.addRecord(new OPTRecord(1232, 0, 0, 0, List.of(new CookieOption(CLIENT))), Section.ADDITIONAL);
        return cookieOf(Dns.parse(Dns.udp(s.address(), ask.toWire())));
    }

    private static CookieOption cookieOf(Message m) {
        return (CookieOption) m.getOPT().getOptions(EDNSOption.Code.COOKIE).get(0);
    }

    private static byte[] query(int id, String name, List<EDNSOption> options) {
        return Dns.queryWithOpt(id, name, Type.A, options);
    }

    /** One query from {@code source}, a 127/8 address of the test's choosing, and its answer. */
    private static Message from(String source, RunningSluice s, byte[] query) throws Exception {
        try (DatagramSocket socket = Dns.sendFrom(source, s.address(), query)) {
            return Dns.parse(Dns.receive(socket));
        }
    }

    @Test
    void underAForgedFloodAtTenTimesTheBudgetTheClientKeepingItsCookieIsAlwaysAnswered() throws Exception {
        int budget = 50;
        try (RunningSluice s = sluice("limits.default.queries", String.valueOf(budget), "limits.verified-share", "0.5")) {
            CookieOption mine = cookieFor(s);
            int before = upstream.udpQueries();
            Random random = new Random(53);
            int mineAnswered = 0;
            int mineAsked = 0;
            for (int i = 0; i < 10 * budget; i++) {
                List<EDNSOption> forged = List.of();
                if (i % 2 == 1) { // a made-up cookie: a client cookie and a server cookie of the right form
                    byte[] client = new byte[8];
                    byte[] server = new byte[16];
                    random.nextBytes(client);
                    random.nextBytes(server);
                    server[0] = 1;
                    forged = List.of(new CookieOption(client, server));
                }
                String source = "127." + (1 + i / 250) + "." + (i % 250) + ".1";
                Message flood = from(source, s, query(i, "r" + i + ".flood.example.com.", forged));
                assertTrue(flood.getRcode() == Rcode.NOERROR || flood.getRcode() == Rcode.REFUSED, flood.toString());
                if (i % 25 == 0) {
                    mineAsked++;
                    Message m = Dns.parse(Dns.udp(s.address(), query(10_000 + i, "www" + i + ".flood.example.com.",
                            List.of(mine))));
                    if (m.getRcode() == Rcode.NOERROR) {
                        mineAnswered++;
                    }
                    mine = cookieOf(m); // a client keeps the newest server cookie
                }
            }
            assertEquals(mineAsked, mineAnswered, "every query of the client that keeps its cookie");
            int reached = upstream.udpQueries() - before;
            assertTrue(reached <= budget, "the upstream saw at most the budget: " + reached);
            int forgedThrough = reached - mineAsked;
            // unverified queries stop once the window's count, verified ones included, reaches half
            assertTrue(forgedThrough <= budget / 2 && forgedThrough >= budget / 2 - 1, "forged ones through: " + forgedThrough);
            assertEquals(10 * budget - forgedThrough, s.sluice().metrics().count("limited_verified", "verified", "false"));
            assertEquals(0, s.sluice().metrics().count("limited_verified", "verified", "true"));
        }
    }

    @Test
    void overTcpAQueryIsVerifiedAndSpendsTheShareKeptForVerifiedOnes() throws Exception {
        try (RunningSluice s = sluice("limits.default.queries", "4", "limits.verified-share", "0.5")) {
            for (int i = 0; i < 4; i++) {
                Dns.udp(s.address(), query(i, "u" + i + ".example.com.", List.of()));
            }
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.udp(s.address(), query(9, "u9.example.com.", List.of()))),
                    "unverified ones stop at half");
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.tcp(s.address(), query(10, "t1.example.com.", List.of()))));
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.tcp(s.address(), query(11, "t2.example.com.", List.of()))));
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.tcp(s.address(), query(12, "t3.example.com.", List.of()))),
                    "and verified ones at the whole budget");
        }
    }

    @Test
    void aFloodForgingAClientsAddressCannotSpendWhatItProvesItselfWith() throws Exception {
        try (RunningSluice s = sluice("limits.per-client.queries", "5", "limits.verified-share", "0.5")) {
            CookieOption mine = cookieFor(s);
            int refused = 0;
            for (int i = 0; i < 20; i++) { // from the client's own address, without its cookie
                refused += Dns.rcode(Dns.udp(s.address(), query(i, "f" + i + ".example.com.", List.of()))) == Rcode.REFUSED
                        ? 1 : 0;
            }
            assertEquals(15, refused, "the unverified budget of 127.0.0.0/24");
            for (int i = 0; i < 5; i++) {
                Message m = Dns.parse(Dns.udp(s.address(), query(100 + i, "m" + i + ".example.com.", List.of(mine))));
                assertEquals(Rcode.NOERROR, m.getRcode(), "its verified budget is its own");
                mine = cookieOf(m);
            }
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.udp(s.address(), query(200, "m9.example.com.", List.of(mine)))));
        }
    }

    /**
     * A site's Unbound in front of sluice, which sends no cookie: over UDP it is unverified, and
     * with the whole budget kept for verified clients it is refused; told to forward over TCP, its
     * handshake proves it, and it is answered.
     */
    @Test
    void unboundForwardingOverTcpIsVerifiedAndOverUdpIsNot(@TempDir Path dir) throws Exception {
        try (RunningSluice s = sluice("limits.default.queries", "100", "limits.verified-share", "1")) {
            for (boolean overTcp : new boolean[] {false, true}) {
                Path own = Files.createDirectories(dir.resolve(overTcp ? "tcp" : "udp"));
                try (UnboundServer unbound = UnboundServer.forwarding(own, s.address(), overTcp)) {
                    Message m = Dns.parse(Dns.udp(unbound.address(), Dns.query(1, "www.example.com.", Type.A)));
                    assertEquals(overTcp ? Rcode.NOERROR : Rcode.SERVFAIL, m.getRcode(),
                            (overTcp ? "over TCP: " : "over UDP: ") + m);
                }
            }
            assertTrue(s.sluice().metrics().count("limited_verified", "verified", "false") > 0);
            assertEquals(0, s.sluice().metrics().count("limited_verified", "verified", "true"));
        }
    }

    @Test
    void slipAnswersEveryNthUnverifiedRefusalTruncatedAndNeverAVerifiedOne() throws Exception {
        try (RunningSluice s = sluice("limits.default.queries", "1", "slip", "2", "threads", "1")) { // slip counts per loop
            Dns.udp(s.address(), query(0, "a.example.com.", List.of()));
            int truncated = 0;
            int refused = 0;
            for (int i = 1; i <= 6; i++) {
                Message m = Dns.parse(Dns.udp(s.address(), query(i, "a.example.com.", List.of())));
                if (m.getHeader().getFlag(Flags.TC)) {
                    assertEquals(Rcode.NOERROR, m.getRcode());
                    assertEquals(0, m.getSection(Section.ANSWER).size());
                    truncated++;
                } else {
                    assertEquals(Rcode.REFUSED, m.getRcode());
                    refused++;
                }
            }
            assertEquals(3, truncated);
            assertEquals(3, refused);
            for (int i = 0; i < 4; i++) {
                assertEquals(Rcode.REFUSED, Dns.rcode(Dns.tcp(s.address(), query(20 + i, "a.example.com.", List.of()))),
                        "over TCP, verified: the action");
            }
            assertEquals(3, s.sluice().metrics().count("limited", "action", "truncate"));
            assertEquals(7, s.sluice().metrics().count("limited", "action", "refused"));
        }
    }
}
