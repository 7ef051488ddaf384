package io.sluice.frontend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.net.Socket;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/** Every kind of bad input gets its answer (or none), is counted, and the next query is served. */
class MalformedQueryTest {
    private static final int NO_ANSWER = -1;
    private static TestUpstream upstream;
    private static RunningSluice sluice;

    @BeforeAll
    static void start() throws Exception {
        upstream = new TestUpstream();
        sluice = RunningSluice.start(List.of(upstream));
    }

    @AfterAll
    static void stop() throws Exception {
        sluice.close();
        upstream.close();
    }

    static Stream<Arguments> badQueries() {
        // header: ID 0x0A0B, flags, QDCOUNT, ANCOUNT, NSCOUNT, ARCOUNT; then the question
        return Stream.of(
                Arguments.of("one byte, no ID", "0a", NO_ANSWER),
                Arguments.of("shorter than a header", "0a0b0100", Rcode.FORMERR),
                Arguments.of("shorter than a header, QR=1", "abcd81000001", NO_ANSWER),
                Arguments.of("an ID and QR=1 alone", "abcd81", NO_ANSWER),
                Arguments.of("a response (QR=1)", "0a0b8100000100000000000000010001", NO_ANSWER),
                Arguments.of("no question", "0a0b0100000000000000000000010001", Rcode.FORMERR),
                Arguments.of("two questions", "0a0b0100000200000000000000010001000001000100", Rcode.FORMERR),
                Arguments.of("name runs past the end", "0a0b010000010000000000000565786100", Rcode.FORMERR),
                Arguments.of("question without type and class", "0a0b010000010000000000000161000001", Rcode.FORMERR),
                Arguments.of("pointer to itself", "0a0b010000010000000000000161c00e00010001", Rcode.FORMERR),
                Arguments.of("pointer back to the start of its own name", "0a0b010000010000000000000161c00c00010001",
                        Rcode.FORMERR),
                Arguments.of("pointer forwards", "0a0b010000010000000000000161c01000010001", Rcode.FORMERR),
                Arguments.of("pointer into the header", "0a0b010000010000000000000161c00200010001", Rcode.FORMERR),
                Arguments.of("reserved label type", "0a0b0100000100000000000041610000010001", Rcode.FORMERR),
                Arguments.of("name longer than 255", longName(), Rcode.FORMERR),
                Arguments.of("opcode STATUS", "0a0b110000010000000000000000010001", Rcode.NOTIMP),
                Arguments.of("opcode UPDATE", "0a0b280000010000000000000000060001", Rcode.NOTIMP),
                Arguments.of("opcode NOTIFY, its question cut short", "0a0b2000000100000000000000060001",
                        Rcode.NOTIMP));
    }

    private static String longName() {
        StringBuilder sb = new StringBuilder("0a0b01000001000000000000");
        for (int i = 0; i < 5; i++) {
            sb.append("3f").append("61".repeat(63)); // five 63-octet labels: 320 octets
        }
        return sb.append("0000010001").toString();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badQueries")
    void udp(String what, String hex, int rcode) throws Exception {
        byte[] bad = HexFormat.of().parseHex(hex);
        byte[] reply = Dns.udp(sluice.address(), bad, rcode == NO_ANSWER ? 300 : 5000);
        if (rcode == NO_ANSWER) {
            assertNull(reply, what);
        } else {
            assertEquals(rcode, Dns.rcode(reply), what);
            assertEquals(0x0A0B, Dns.id(reply));
            if (rcode == Rcode.NOTIMP && !what.contains("cut short")) { // a question it can read is echoed, as Unbound's
                assertArrayEquals(Arrays.copyOfRange(bad, 12, bad.length), Arrays.copyOfRange(reply, 12, reply.length));
                assertEquals(1, reply[5], "QDCOUNT");
            } else {
                assertEquals(12, reply.length, "header only, no amplification");
            }
            assertEquals(0x80, reply[2] & 0x80, "QR set");
        }
        assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(sluice.address(), Dns.query(1, "next.example.", Type.A))));
    }

    /** Over TCP a message that is not a query at all (no ID, QR=1) closes the connection at once, as nsd does. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("badQueries")
    void tcp(String what, String hex, int rcode) throws Exception {
        byte[] bad = HexFormat.of().parseHex(hex);
        try (Socket s = new Socket(sluice.address().getAddress(), sluice.address().getPort())) {
            s.setSoTimeout(5000);
            Dns.writeFrame(s, bad);
            if (rcode == NO_ANSWER) {
                long start = System.nanoTime();
                assertEquals(-1, s.getInputStream().read(), what + ": closed");
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertTrue(ms < 2000, what + ": closed after " + ms + " ms, not at the idle timeout");
                return;
            }
            byte[] good = Dns.query(2, "next.example.", Type.A);
            Dns.writeFrame(s, good);
            byte[] first = Dns.readFrame(s);
            assertEquals(rcode, Dns.rcode(first), what);
            assertEquals(0x0A0B, Dns.id(first));
            byte[] second = Dns.readFrame(s);
            assertEquals(2, Dns.id(second), "the connection still serves: " + what);
            assertEquals(Rcode.NOERROR, Dns.rcode(second));
        }
    }

    /** RFC 6891 section 7: an EDNS query gets an OPT back, whatever sluice answers. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("badQueriesWithOpt")
    void anEdnsQuerysErrorCarriesAnOpt(String what, String hex, int rcode) throws Exception {
        byte[] bad = HexFormat.of().parseHex(hex);
        for (boolean tcp : new boolean[] {false, true}) {
            byte[] reply = tcp ? Dns.tcp(sluice.address(), bad) : Dns.udp(sluice.address(), bad);
            Message m = Dns.parse(reply);
            assertEquals(rcode, m.getRcode(), what);
            assertNotNull(m.getOPT(), what + ": an OPT");
            assertEquals(0x8000, m.getOPT().getFlags() & 0x8000, "DO copied");
            assertTrue(reply.length <= bad.length, "no amplification");
        }
    }

    static Stream<Arguments> badQueriesWithOpt() {
        String opt = "0000291000000080000000"; // root owner, OPT, 4096, DO, no options
        String root = "0000010001"; // the root, type A, class IN
        return Stream.of(
                Arguments.of("two questions", "0a0b01000002000000000001" + root + root + opt, Rcode.FORMERR),
                Arguments.of("no question and no cookie", "0a0b01000000000000000001" + opt, Rcode.FORMERR),
                Arguments.of("opcode STATUS", "0a0b11000001000000000001" + root + opt, Rcode.NOTIMP),
                Arguments.of("QDCOUNT 2, one question", "0a0b01000002000000000001" + root + opt, Rcode.FORMERR));
    }

    @Test
    void badInputIsCountedNotForwarded() throws Exception {
        var m = sluice.sluice().metrics();
        long formerr = m.count("formerr");
        long upstreamBefore = upstream.udpQueries();
        Dns.udp(sluice.address(), HexFormat.of().parseHex("0a0b0100000000000000000000010001"));
        assertEquals(formerr + 1, m.count("formerr"));
        assertEquals(upstreamBefore, upstream.udpQueries());
        byte[] query = Dns.query(3, "x.example.", Type.A);
        assertArrayEquals(Dns.udp(upstream.address(), query), Dns.udp(sluice.address(), query));
    }
}
