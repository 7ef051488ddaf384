package io.sluice.coalesce;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.limit.Clock;
import io.sluice.metrics.Registry;
import io.sluice.testing.Await;
import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.net.DatagramSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.CookieOption;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.ExtendedErrorCodeOption;
import org.xbill.DNS.Message;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * Coalescing over real sockets: identical queries that arrive while one waits on the upstream
 * (held there until the test releases it) are asked once, and each client gets its own answer.
 * One loop, so that every query meets the others (each loop joins its own). Without retransmission:
 * what is counted is the questions asked upstream, and a hold past a retransmit timeout would ask
 * a leader's again (RetransmitTest has that).
 */
class CoalescingTest {
    private static final String NAME = "stampede.example.";

    @Test
    void identicalQueriesWaitingTogetherAreAskedOnceAndEachGetsItsOwnAnswer() throws Exception {
        int n = 50;
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "threads", "1", "retransmit", "false")) {
            up.hold();
            List<DatagramSocket> clients = new ArrayList<>();
            List<byte[]> queries = new ArrayList<>();
            try {
                for (int i = 0; i < n; i++) {
                    byte[] q = Dns.query(1000 + i, inCase(NAME, i), Type.A);
                    clients.add(Dns.send(s.address(), q));
                    queries.add(q);
                }
                Await.until("every query but the first joined it", () -> count(s, "coalesced") == n - 1);
                // the leader's query leaves at the end of its loop's wake-up, maybe after the count
                Await.until("the leader's query upstream", () -> up.udpQueries() > 0);
                assertEquals(1, up.udpQueries(), "one query upstream for " + n);
                up.release();
                for (int i = 0; i < n; i++) {
                    byte[] reply = Dns.receive(clients.get(i));
                    assertEquals(1000 + i, Dns.id(reply), "its own ID");
                    assertArrayEquals(question(queries.get(i)), question(reply), "its own letters");
                    Message m = Dns.parse(reply);
                    assertEquals(Rcode.NOERROR, m.getRcode());
                    assertEquals("192.0.2.1", ((ARecord) m.getSection(Section.ANSWER).get(0)).getAddress().getHostAddress());
                }
            } finally {
                clients.forEach(DatagramSocket::close);
            }
            assertEquals(n, s.sluice().metrics().count("answers", "rcode", "NOERROR", "source", "upstream"),
                    "each counted as an upstream's answer");
            assertEquals(1, count(s, "forwarded"));
        }
    }

    /** A joined query gets none of the options that were the leader's client's: its cookie above all. */
    @Test
    void aJoinedQueryGetsNoneOfTheOtherClientsOptions() throws Exception {
        byte[] leaderCookie = {1, 1, 1, 1, 1, 1, 1, 1};
        byte[] joinedCookie = {2, 2, 2, 2, 2, 2, 2, 2};
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "threads", "1", "retransmit", "false")) {
            up.hold();
            DatagramSocket leader = Dns.send(s.address(), Dns.queryWithOpt(1, NAME, Type.A,
                    List.of(new CookieOption(leaderCookie))));
            DatagramSocket joined = Dns.send(s.address(), Dns.queryWithOpt(2, NAME, Type.A,
                    List.of(new CookieOption(joinedCookie))));
            try {
                Await.until("the second joined the first", () -> count(s, "coalesced") == 1);
                up.release();
                Message first = Dns.parse(Dns.receive(leader));
                assertArrayEquals(leaderCookie, ((CookieOption) first.getOPT()
                        .getOptions(EDNSOption.Code.COOKIE).get(0)).getClientCookie(), "its own cookie");
                Message second = Dns.parse(Dns.receive(joined));
                assertEquals(Rcode.NOERROR, second.getRcode());
                assertEquals(1, second.getSection(Section.ANSWER).size());
                List<EDNSOption> cookies = second.getOPT().getOptions(EDNSOption.Code.COOKIE);
                assertEquals(1, cookies.size(), second.toString());
                assertArrayEquals(joinedCookie, ((CookieOption) cookies.get(0)).getClientCookie(),
                        "its own cookie, none of another client's: " + second);
            } finally {
                leader.close();
                joined.close();
            }
        }
    }

    @Test
    void overTcpTooEachConnectionGetsItsOwnAnswer() throws Exception {
        int n = 10;
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "threads", "1", "retransmit", "false")) {
            up.hold();
            List<Socket> clients = new ArrayList<>();
            try {
                for (int i = 0; i < n; i++) {
                    Socket c = new Socket(s.address().getAddress(), s.address().getPort());
                    c.setSoTimeout(10_000);
                    Dns.writeFrame(c, Dns.query(i, inCase(NAME, i), Type.A));
                    clients.add(c);
                }
                Await.until("every query but the first joined it", () -> count(s, "coalesced") == n - 1);
                up.release();
                for (int i = 0; i < n; i++) {
                    byte[] reply = Dns.readFrame(clients.get(i));
                    assertEquals(i, Dns.id(reply));
                    assertArrayEquals(question(Dns.query(i, inCase(NAME, i), Type.A)), question(reply));
                    assertEquals(Rcode.NOERROR, Dns.rcode(reply));
                }
            } finally {
                for (Socket c : clients) {
                    c.close();
                }
            }
            assertEquals(1, up.tcpQueries());
        }
    }

    @Test
    void aFailureReachesEveryWaiterAsItWouldHaveReachedOne() throws Exception {
        int n = 8;
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "threads", "1", "timeout", "300ms",
                     "query-timeout", "300ms", "retransmit", "false")) {
            up.mode(TestUpstream.Mode.SILENT);
            List<DatagramSocket> clients = new ArrayList<>();
            try {
                for (int i = 0; i < n; i++) {
                    clients.add(Dns.send(s.address(), Dns.queryWithOpt(i, NAME, Type.A, List.of())));
                }
                for (int i = 0; i < n; i++) {
                    byte[] reply = Dns.receive(clients.get(i));
                    assertEquals(i, Dns.id(reply));
                    Message m = Dns.parse(reply);
                    assertEquals(Rcode.SERVFAIL, m.getRcode()); // with Extended DNS Error 22, as one alone gets
                    OPTRecord opt = m.getOPT();
                    assertTrue(opt != null && opt.getOptions(EDNSOption.Code.EDNS_EXTENDED_ERROR).stream()
                            .anyMatch(o -> ((ExtendedErrorCodeOption) o).getErrorCode()
                                    == ExtendedErrorCodeOption.NO_REACHABLE_AUTHORITY), m.toString());
                }
            } finally {
                clients.forEach(DatagramSocket::close);
            }
            assertEquals(1, up.udpQueries());
            assertEquals(n - 1, count(s, "coalesced"));
            assertEquals(1, count(s, "servfail"), "one query failed upstream");
            assertEquals(n, s.sluice().metrics().count("answers", "rcode", "SERVFAIL", "source", "sluice"),
                    "and every client was answered so");
        }
    }

    @Test
    void pastMaxWaitersAQueryIsAskedOnItsOwnAndTheNextOnesJoinIt() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "threads", "1", "coalesce-max-waiters", "3", "retransmit", "false")) {
            up.hold();
            List<DatagramSocket> clients = new ArrayList<>();
            try {
                for (int i = 0; i < 10; i++) {
                    clients.add(Dns.send(s.address(), Dns.query(i, NAME, Type.A)));
                }
                // the first leads and three join it; the fifth is asked and three join it; the ninth, and one
                Await.until("10 queries asked or joined", () -> up.udpQueries() + count(s, "coalesced") == 10);
                assertEquals(7, count(s, "coalesced"));
                assertEquals(3, up.udpQueries());
                up.release();
                for (DatagramSocket c : clients) {
                    assertEquals(Rcode.NOERROR, Dns.rcode(Dns.receive(c)));
                }
            } finally {
                clients.forEach(DatagramSocket::close);
            }
        }
    }

    @Test
    void withCoalesceOffEveryQueryIsAsked() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "threads", "1", "coalesce", "false", "retransmit", "false")) {
            up.hold();
            List<DatagramSocket> clients = new ArrayList<>();
            try {
                for (int i = 0; i < 5; i++) {
                    clients.add(Dns.send(s.address(), Dns.query(i, NAME, Type.A)));
                }
                Await.until("5 queries upstream", () -> up.udpQueries() == 5);
                up.release();
                for (DatagramSocket c : clients) {
                    assertEquals(Rcode.NOERROR, Dns.rcode(Dns.receive(c)));
                }
            } finally {
                clients.forEach(DatagramSocket::close);
            }
            assertEquals(0, count(s, "coalesced"));
        }
    }

    @Test
    void queriesThatWouldNotShareACacheEntryAreNotJoined() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "threads", "1", "retransmit", "false")) {
            up.hold();
            List<DatagramSocket> clients = new ArrayList<>();
            try {
                clients.add(Dns.send(s.address(), Dns.query(1, NAME, Type.A)));
                clients.add(Dns.send(s.address(), Dns.query(2, NAME, Type.AAAA))); // another type
                clients.add(Dns.send(s.address(), Dns.queryWithOpt(3, NAME, Type.A, List.of()))); // EDNS: another size
                Message noRecursion = Dns.message(4, NAME, Type.A);
                noRecursion.getHeader().unsetFlag(org.xbill.DNS.Flags.RD);
                clients.add(Dns.send(s.address(), noRecursion.toWire()));
                Await.until("4 queries upstream", () -> up.udpQueries() == 4);
                clients.add(Dns.send(s.address(), Dns.query(5, NAME.toUpperCase(), Type.A))); // the first's, in capitals
                Await.until("the fifth joined the first", () -> count(s, "coalesced") == 1);
                up.release();
                for (DatagramSocket c : clients) {
                    assertEquals(Rcode.NOERROR, Dns.rcode(Dns.receive(c)));
                }
            } finally {
                clients.forEach(DatagramSocket::close);
            }
            assertEquals(4, up.udpQueries());
        }
    }

    /** A joined query over its domain's budget is refused as any: a budget counts queries, not upstream ones. */
    @Test
    void aWaiterOverItsDomainsBudgetIsRefused() throws Exception {
        AtomicLong now = new AtomicLong(1_000_000_000_000L);
        Clock clock = now::get;
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), clock, b -> { }, "threads", "1",
                     "limits.default.queries", "3", "limits.default.window", "10s", "retransmit", "false")) {
            up.hold();
            List<DatagramSocket> clients = new ArrayList<>();
            try {
                for (int i = 0; i < 6; i++) {
                    clients.add(Dns.send(s.address(), Dns.query(i, NAME, Type.A)));
                }
                List<Integer> rcodes = new ArrayList<>();
                for (int i = 3; i < 6; i++) { // refused at once, while the first three wait
                    rcodes.add(Dns.rcode(Dns.receive(clients.get(i))));
                }
                assertEquals(List.of(Rcode.REFUSED, Rcode.REFUSED, Rcode.REFUSED), rcodes);
                assertEquals(2, count(s, "coalesced"));
                up.release();
                for (int i = 0; i < 3; i++) {
                    assertEquals(Rcode.NOERROR, Dns.rcode(Dns.receive(clients.get(i))));
                }
            } finally {
                clients.forEach(DatagramSocket::close);
            }
            assertEquals(1, up.udpQueries());
        }
    }

    private static long count(RunningSluice s, String counter) {
        Registry m = s.sluice().metrics();
        return m.count(counter);
    }

    /** {@code name} with the letters whose index bit is set in {@code i} in capitals. */
    private static String inCase(String name, int i) {
        char[] c = name.toCharArray();
        for (int k = 0; k < c.length && k < 31; k++) {
            if ((i >>> k & 1) != 0) {
                c[k] = Character.toUpperCase(c[k]);
            }
        }
        return new String(c);
    }



    /** The question section's bytes: the name as written, type and class. */
    private static byte[] question(byte[] message) {
        int end = 12;
        while (message[end] != 0) {
            end += (message[end] & 0xFF) + 1;
        }
        return Arrays.copyOfRange(message, 12, end + 5);
    }
}
