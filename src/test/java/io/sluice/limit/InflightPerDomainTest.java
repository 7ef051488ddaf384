package io.sluice.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.testing.Await;
import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.net.DatagramSocket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.ExtendedErrorCodeOption;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/**
 * limits.max-inflight-per-domain over real sockets, the upstream holding its replies until the
 * test releases them: a domain's queries past the bound are answered at once, the rest wait.
 */
class InflightPerDomainTest {
    @Test
    void pastTheBoundADomainsQueriesGetServfailAtOnceAcrossTheLoops() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "threads", "2",
                     "limits.max-inflight-per-domain", "3")) {
            up.hold();
            List<DatagramSocket> clients = new ArrayList<>();
            try {
                for (int i = 0; i < 10; i++) {
                    clients.add(Dns.send(s.address(), Dns.queryWithOpt(i, "n" + i + ".slow.example.", Type.A, List.of())));
                }
                DatagramSocket other = Dns.send(s.address(), Dns.query(99, "www.fast.example.", Type.A));
                clients.add(other);
                Await.until("7 answered at once", () -> count(s, "inflight_capped") == 7);
                List<Integer> waiting = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    byte[] reply = poll(clients.get(i));
                    if (reply == null) {
                        waiting.add(i);
                        continue;
                    }
                    Message m = Dns.parse(reply);
                    assertEquals(Rcode.SERVFAIL, m.getRcode());
                    assertEquals(ExtendedErrorCodeOption.NO_REACHABLE_AUTHORITY, ((ExtendedErrorCodeOption)
                            m.getOPT().getOptions(EDNSOption.Code.EDNS_EXTENDED_ERROR).get(0)).getErrorCode());
                }
                assertEquals(3, waiting.size(), "three wait on the upstream: " + waiting);
                assertEquals(4, asked(up), "three of slow.example, and fast.example's, which has its own count: "
                        + up.receivedNames());
                up.release();
                for (int i : waiting) {
                    assertEquals(Rcode.NOERROR, Dns.rcode(Dns.receive(clients.get(i))));
                }
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.receive(other)));
                // answered, they wait no longer: the domain has room again
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(1, "again.slow.example.", Type.A))));
            } finally {
                clients.forEach(DatagramSocket::close);
            }
        }
    }

    @Test
    void exemptClientsAndUnlimitedDomainsAreNotBoundedAndJoinedQueriesDoNotCount() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), Clock.system(), b -> b.domain("exempt.example", "unlimited", null),
                     "threads", "1", "limits.max-inflight-per-domain", "1",
                     "limits.exempt-clients", "127.0.0.2/32")) {
            up.hold();
            List<DatagramSocket> clients = new ArrayList<>();
            try {
                for (int i = 0; i < 4; i++) {
                    clients.add(Dns.send(s.address(), Dns.query(i, "n" + i + ".exempt.example.", Type.A)));
                    clients.add(Dns.sendFrom("127.0.0.2", s.address(), Dns.query(i, "n" + i + ".other.example.", Type.A)));
                    clients.add(Dns.send(s.address(), Dns.query(i, "same.joined.example.", Type.A)));
                }
                Await.until("8 sent and 3 joined", () -> asked(up) == 9 && count(s, "coalesced") == 3);
                up.release();
                for (DatagramSocket c : clients) {
                    assertEquals(Rcode.NOERROR, Dns.rcode(Dns.receive(c)));
                }
            } finally {
                clients.forEach(DatagramSocket::close);
            }
            assertEquals(0, count(s, "inflight_capped"));
        }
    }

    @Test
    void aQueryPastTheBoundGetsAStaleAnswerWhenTheCacheHasOne() throws Exception {
        AtomicLong now = new AtomicLong(1_800_000_000_000_000_000L);
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), now::get, b -> { }, "threads", "1",
                     "cache.size", "1000", "limits.max-inflight-per-domain", "1")) {
            up.ttl("www.slow.example.", 60);
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.queryWithOpt(1, "www.slow.example.", Type.A,
                    List.of()))));
            now.addAndGet(120_000_000_000L); // expired: stale
            up.hold();
            DatagramSocket held = Dns.send(s.address(), Dns.query(2, "other.slow.example.", Type.A));
            try {
                Await.until("the domain's one query waiting", () -> asked(up) == 2);
                Message stale = Dns.parse(Dns.udp(s.address(), Dns.queryWithOpt(3, "www.slow.example.", Type.A,
                        List.of())));
                Dns.assertStale(stale, "past the bound, the cache's stale answer");
                assertEquals(1, count(s, "inflight_capped"));
                up.release();
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.receive(held)));
            } finally {
                held.close();
            }
        }
    }

    /** The questions the upstream was asked: a held query may be asked again at its retransmit timeout. */
    private static long asked(TestUpstream up) {
        return up.receivedNames().stream().map(String::toLowerCase).distinct().count();
    }

    private static long count(RunningSluice s, String counter) {
        return s.sluice().metrics().count(counter);
    }




    /** What {@code c} has been sent already, or null: each answer at once was counted before it was sent. */
    private static byte[] poll(DatagramSocket c) throws Exception {
        c.setSoTimeout(200);
        try {
            return Dns.receive(c);
        } catch (SocketTimeoutException e) {
            return null;
        } finally {
            c.setSoTimeout(10_000);
        }
    }
}
