package io.sluice.forward;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * An off-path forger floods sluice's upstream sockets with replies from the upstream's own
 * address and port, with the right question, while real queries wait on a slow upstream; and
 * the case randomisation (0x20) that stops it, with its fallback and the socket rotation.
 */
class ForgedReplyTest {
    private static final int CLIENTS = 25;
    /** Many letters: the chance that a scramble leaves all of them lower case is 2^-30 per query. */
    private static final String NAME = "forgery-target-bank-login.example.";
    private static final String FORGED = "203.0.113.66";
    private static final String GENUINE = "192.0.2.1";

    @Test
    void noForgedAnswerReachesAClientAndTheGenuineOnesStillDo() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "timeout", "10s", "query-timeout", "10s",
                     "coalesce", "false")) { // each of the identical queries its own, to forge
            up.holdUntil(CLIENTS); // slow: no reply before every query waits
            up.forgeWhenReleasing(FORGED, 200, // nine in ten of the random ones read: the rest may be dropped
                    () -> s.sluice().metrics().count("replies_rejected") >= CLIENTS * 200L * 9 / 10);
            List<String> answers = askAtOnce(s.address());
            assertEquals(List.of(GENUINE), answers.stream().distinct().toList(), answers.toString());
            var m = s.sluice().metrics();
            assertTrue(m.count("replies_case_mismatched") >= CLIENTS, m.toString()); // each query's lucky forgery
            assertTrue(m.count("replies_rejected") >= CLIENTS * 201L * 9 / 10, "counted per upstream: " + m);
            assertEquals(0, m.count("servfail"));
        }
    }

    /** The same flood without randomize-case: what the defence is for. */
    @Test
    void withoutCaseRandomisationTheForgerWins() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "timeout", "10s", "query-timeout", "10s",
                     "randomize-case", "false", "coalesce", "false")) {
            up.holdUntil(CLIENTS);
            up.forgeWhenReleasing(FORGED, 0, () -> true);
            List<String> answers = askAtOnce(s.address());
            assertEquals(List.of(FORGED), answers.stream().distinct().toList(), answers.toString());
        }
    }

    @Test
    void theUpstreamSeesRandomCaseAndTheClientGetsItsOwnBack() throws Exception {
        String written = "WwW.MiXeD-CaSe-LeTtErS.example.";
        try (TestUpstream up = new TestUpstream(); RunningSluice s = RunningSluice.start(List.of(up))) {
            for (int i = 0; i < 20; i++) {
                byte[] query = Dns.query(i, written, Type.A);
                byte[] reply = Dns.udp(s.address(), query);
                assertArrayEquals(question(query), question(reply), "the question exactly as the client wrote it");
                assertEquals(1, Dns.parse(reply).getSection(Section.ANSWER).size());
            }
            Set<String> seen = new HashSet<>(up.receivedNames());
            assertTrue(seen.size() > 10, "20 queries, 26 letters: the upstream sees many mixes: " + seen);
            assertTrue(seen.stream().allMatch(n -> n.equalsIgnoreCase(written)), seen.toString());
            byte[] tcpQuery = Dns.query(99, written, Type.A);
            assertArrayEquals(question(tcpQuery), question(Dns.tcp(s.address(), tcpQuery)));
            assertArrayEquals(question(tcpQuery), question(up.lastQuery()), "TCP is sent as written");
        }
    }

    @Test
    void anUpstreamThatDoesNotKeepCaseGetsNamesAsWrittenAfterThreeTimeouts() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "threads", "1", "timeout", "200ms",
                     "retransmit", "false")) {
            up.lowercaseQuestions(true);
            List<Integer> rcodes = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                rcodes.add(Dns.rcode(Dns.udp(s.address(), Dns.query(i, "case-blind-upstream.example.", Type.A))));
            }
            assertEquals(List.of(Rcode.SERVFAIL, Rcode.SERVFAIL, Rcode.SERVFAIL, Rcode.NOERROR, Rcode.NOERROR,
                    Rcode.NOERROR), rcodes);
            assertEquals(1, s.sluice().metrics().count("case_fallbacks"));
            assertEquals("case-blind-upstream.example.", up.receivedNames().get(5), "sent as written");
        }
    }

    @Test
    void upstreamSocketsAreReplacedAndAReplyOnAReplacedOneStillCounts() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "threads", "1", "upstream-sockets", "1",
                     "upstream-socket-lifetime", "1s", "timeout", "3s", "retransmit", "false")) {
            up.delayMillis(1500); // the socket this query leaves on is replaced (after 1 s) before its reply comes
            Message first = Dns.parse(Dns.udp(s.address(), Dns.query(1, "rotate.example.", Type.A), 5000));
            assertEquals(Rcode.NOERROR, first.getRcode());
            up.delayMillis(0);
            int firstPort = up.senderPorts().get(0);
            Dns.udp(s.address(), Dns.query(2, "rotate.example.", Type.A));
            assertNotEquals(firstPort, up.senderPorts().get(1), "a new source port after the lifetime");
        }
    }

    /** Sends {@link #CLIENTS} queries for {@link #NAME} at once, each from its own socket; the addresses answered. */
    private static List<String> askAtOnce(InetSocketAddress sluice) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
        try {
            List<Future<String>> replies = new ArrayList<>();
            for (int i = 0; i < CLIENTS; i++) {
                int id = i;
                replies.add(pool.submit(() -> {
                    Message m = Dns.parse(Dns.udp(sluice, Dns.query(id, NAME, Type.A), 20_000));
                    return ((ARecord) m.getSection(Section.ANSWER).get(0)).getAddress().getHostAddress();
                }));
            }
            List<String> out = new ArrayList<>();
            for (Future<String> f : replies) {
                out.add(f.get());
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    /** The question section's bytes of a message with one question. */
    private static byte[] question(byte[] message) {
        int end = 12;
        while (message[end] != 0) {
            end += (message[end] & 0xFF) + 1;
        }
        return java.util.Arrays.copyOfRange(message, 12, end + 5);
    }
}
