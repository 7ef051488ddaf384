package io.sluice.forward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.limit.Clock;
import io.sluice.testing.DatagramRelay;
import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/**
 * Retransmission (retransmit: true, the default): a UDP attempt unanswered within its upstream's
 * retransmit timeout is asked again, from another socket under a new ID, and a late reply to the
 * earlier attempt is still taken. The losses are real: datagrams dropped or held by a relay
 * between sluice and its upstream.
 */
class RetransmitTest {
    /** Slack for a loaded machine on top of what is measured. */
    private static final long MARGIN_MS = 700;

    @Test
    void aLostQueryIsAskedAgainAtTheRetransmitTimeoutNotTheTimeout() throws Exception {
        try (TestUpstream up = new TestUpstream(); DatagramRelay relay = new DatagramRelay(up.address());
             RunningSluice s = start(relay, "timeout", "2s", "threads", "1")) {
            relay.queries(n -> n == 1 ? -1 : 0); // the first query datagram is lost
            long start = System.nanoTime();
            byte[] reply = Dns.udp(s.address(), Dns.query(7, "lost.example.", Type.A));
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertEquals(Rcode.NOERROR, Dns.rcode(reply));
            assertTrue(ms >= 300 && ms < 376 + MARGIN_MS, "answered after " + ms + " ms: the first retransmit timeout"
                    + " (376 ms before any reply) rather than the 2 s timeout");
            assertEquals(2, relay.queries());
            assertEquals(1, up.udpQueries(), "the upstream saw the second attempt only");
            assertEquals(2, relay.sources(), "the second attempt left from another source port");
            assertEquals(1, s.sluice().metrics().count("retransmits"));
            assertEquals(0, s.sluice().metrics().count("servfail"));
        }
    }

    @Test
    void aLateReplyToTheFirstAttemptIsTaken() throws Exception {
        try (TestUpstream up = new TestUpstream(); DatagramRelay relay = new DatagramRelay(up.address());
             RunningSluice s = start(relay, "timeout", "2s", "threads", "1")) {
            // the first reply comes after the retransmit timeout; the reply to the second attempt is lost
            relay.replies(n -> n == 1 ? 800 : -1);
            long start = System.nanoTime();
            byte[] reply = Dns.udp(s.address(), Dns.query(9, "late.example.", Type.A));
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertEquals(Rcode.NOERROR, Dns.rcode(reply));
            assertEquals(9, Dns.id(reply));
            assertTrue(ms >= 750 && ms < 800 + MARGIN_MS, "the late reply, after " + ms + " ms");
            assertEquals(2, up.udpQueries(), "asked twice");
            assertEquals(1, s.sluice().metrics().count("retransmits"));
            assertEquals(0, s.sluice().metrics().count("replies_unexpected"), "the late reply was awaited");
        }
    }

    @Test
    void aSilentUpstreamIsAskedWithBackoffUntilQueryTimeout() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "timeout", "300ms", "query-timeout", "1s")) {
            up.mode(TestUpstream.Mode.SILENT);
            long start = System.nanoTime();
            byte[] reply = Dns.udp(s.address(), Dns.query(3, "silent.example.", Type.A), 5000);
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertEquals(Rcode.SERVFAIL, Dns.rcode(reply));
            assertTrue(ms >= 950 && ms < 1000 + MARGIN_MS, "SERVFAIL after " + ms + " ms, at query-timeout");
            // each wait capped at the 300 ms timeout: sent at 0, 300, 600 and 900 ms
            assertTrue(up.udpQueries() >= 3 && up.udpQueries() <= 4, up.udpQueries() + " attempts");
        }
    }

    @Test
    void aQueryLostToTheFirstUpstreamIsAskedOfTheSecond() throws Exception {
        try (TestUpstream a = new TestUpstream(); TestUpstream b = new TestUpstream();
             DatagramRelay toA = new DatagramRelay(a.address());
             RunningSluice s = RunningSluice.startFor(List.of(toA.hostPort(), b.hostPort()), Clock.system(),
                     x -> { }, "timeout", "2s")) {
            toA.queries(n -> -1);
            long start = System.nanoTime();
            byte[] reply = Dns.udp(s.address(), Dns.query(5, "failover.example.", Type.A));
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertEquals(Rcode.NOERROR, Dns.rcode(reply));
            assertTrue(ms < 376 + MARGIN_MS, "answered by the second after " + ms + " ms");
            assertEquals(1, toA.queries());
            assertEquals(1, b.udpQueries());
        }
    }

    /**
     * Two attempts of one query on the one socket, then nothing listens there any more: the ICMP
     * port unreachable hands both IDs back, and the query ends at once, with no bug met.
     */
    @Test
    void anUpstreamGoneAfterARetransmitEndsTheQueryAtOnce() throws Exception {
        TestUpstream up = new TestUpstream();
        try (RunningSluice s = RunningSluice.start(List.of(up), "threads", "1", "upstream-sockets", "1",
                "timeout", "2s")) {
            up.mode(TestUpstream.Mode.SILENT);
            try (java.net.DatagramSocket client = Dns.send(s.address(), Dns.query(11, "gone.example.", Type.A))) {
                io.sluice.testing.Await.until("asked again", () -> up.udpQueries() >= 2);
                up.close(); // the next attempt meets a closed port
                long start = System.nanoTime();
                byte[] reply = Dns.receive(client);
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertEquals(Rcode.SERVFAIL, Dns.rcode(reply));
                assertTrue(ms < 2000 + MARGIN_MS, "SERVFAIL after " + ms + " ms");
            }
            assertTrue(s.sluice().metrics().count("upstream_unreachable") >= 1, "the port unreachable was seen");
            assertEquals(0, s.sluice().metrics().count("internal_errors"), "no bug met on the way");
        } finally {
            up.close();
        }
    }

    /** The measure: 10% of the datagrams lost each way, and not one SERVFAIL. */
    @Test
    void tenPercentLossEachWayCostsNoAnswer() throws Exception {
        try (TestUpstream up = new TestUpstream(); DatagramRelay relay = new DatagramRelay(up.address());
             RunningSluice s = start(relay, "timeout", "2s")) {
            relay.queries(DatagramRelay.losing(0.10, 1));
            relay.replies(DatagramRelay.losing(0.10, 2));
            // Eight clients of 25 queries each, one query at a time: a lost one waits out its retransmit alone.
            List<Long> ms = Collections.synchronizedList(new ArrayList<>());
            ExecutorService clients = Executors.newFixedThreadPool(8);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int c = 0; c < 8; c++) {
                    int first = c * 25;
                    done.add(clients.submit(() -> {
                        for (int i = first; i < first + 25; i++) {
                            long start = System.nanoTime();
                            byte[] reply = Dns.udp(s.address(), Dns.query(i, "loss" + i + ".example.", Type.A), 5000);
                            ms.add((System.nanoTime() - start) / 1_000_000);
                            assertEquals(Rcode.NOERROR, Dns.rcode(reply), "query " + i);
                        }
                        return null;
                    }));
                }
                for (Future<?> f : done) {
                    f.get(60, TimeUnit.SECONDS);
                }
            } finally {
                clients.shutdownNow();
            }
            assertEquals(200, ms.size());
            Collections.sort(ms);
            assertTrue(relay.dropped() > 10, relay.dropped() + " datagrams dropped");
            assertEquals(0, s.sluice().metrics().count("servfail"));
            assertTrue(ms.get(197) < 500 + MARGIN_MS, "p99 " + ms.get(197) + " ms");
        }
    }

    @Test
    void anUpstreamThatDoesNotKeepCaseIsAskedInTheClientsLettersWithinTheFirstQuery() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "threads", "1", "timeout", "200ms")) {
            up.lowercaseQuestions(true);
            for (int i = 0; i < 4; i++) {
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(),
                        Dns.query(i, "case-blind-upstream.example.", Type.A), 5000)), "query " + i);
            }
            assertEquals(1, s.sluice().metrics().count("case_fallbacks"), "after three attempts in the wrong case");
            assertEquals(3, s.sluice().metrics().count("retransmits"), "the first query's, the last in its client's letters");
        }
    }

    private static RunningSluice start(DatagramRelay relay, String... keyValues) throws Exception {
        return RunningSluice.startFor(List.of(relay.hostPort()), Clock.system(), b -> { }, keyValues);
    }
}
