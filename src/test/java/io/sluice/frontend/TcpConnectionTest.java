package io.sluice.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.limit.ManualClock;
import io.sluice.testing.Await;
import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/** Client TCP connections: idle timeout, the connection bound, half-sent frames. */
class TcpConnectionTest {

    @Test
    void anIdleConnectionIsClosed() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "tcp-idle-timeout", "300ms");
             Socket c = new Socket(s.address().getAddress(), s.address().getPort())) {
            c.setSoTimeout(5000);
            Dns.writeFrame(c, Dns.query(1, "a.example.", Type.A));
            assertEquals(1, Dns.id(Dns.readFrame(c)));
            long start = System.nanoTime();
            assertEquals(-1, c.getInputStream().read(), "closed by the server");
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertTrue(ms >= 200 && ms < 3000, "closed after " + ms + " ms");
            assertEquals(1, s.sluice().metrics().count("tcp_idle_closed"));
        }
    }

    @Test
    void connectionsPastTheBoundAreClosedAndOthersStillServed() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "max-tcp-connections", "2");
             Socket a = new Socket(s.address().getAddress(), s.address().getPort());
             Socket b = new Socket(s.address().getAddress(), s.address().getPort())) {
            a.setSoTimeout(5000);
            Dns.writeFrame(a, Dns.query(1, "a.example.", Type.A));
            assertEquals(1, Dns.id(Dns.readFrame(a)));
            Dns.writeFrame(b, Dns.query(2, "b.example.", Type.A));
            b.setSoTimeout(5000);
            assertEquals(2, Dns.id(Dns.readFrame(b)));
            try (Socket c = new Socket(s.address().getAddress(), s.address().getPort())) {
                c.setSoTimeout(5000);
                InputStream in = c.getInputStream();
                assertEquals(-1, in.read(), "the third connection is closed at once");
            }
            assertEquals(1, s.sluice().metrics().count("tcp_connections_rejected"));
            Dns.writeFrame(a, Dns.query(3, "c.example.", Type.A));
            assertEquals(3, Dns.id(Dns.readFrame(a)));
        }
    }

    /** Opened and closed one after another, as a TLS handshake flood would: the rate, not the count open, is bounded. */
    @Test
    void aClientOpeningConnectionsFasterThanItsRateIsClosedUntilTheNextSecond() throws Exception {
        ManualClock clock = new ManualClock();
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), clock, b -> { }, "tcp-connection-rate-per-client", "2")) {
            for (int i = 1; i <= 2; i++) {
                assertEquals(i, Dns.id(Dns.tcp(s.address(), Dns.query(i, "rate.example.", Type.A))), "within the rate");
            }
            try (Socket third = new Socket(s.address().getAddress(), s.address().getPort())) {
                third.setSoTimeout(5000);
                assertEquals(-1, third.getInputStream().read(), "the third in the second is closed at once");
            }
            assertEquals(1, s.sluice().metrics().count("tcp_connection_rate_rejected"));
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(4, "udp.example.", Type.A))),
                    "UDP is not touched");
            clock.advanceMillis(1_000);
            assertEquals(5, Dns.id(Dns.tcp(s.address(), Dns.query(5, "rate.example.", Type.A))), "a new second");
        }
    }

    @Test
    void aHalfSentFrameBlocksNobodyElse() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "threads", "1");
             Socket slow = new Socket(s.address().getAddress(), s.address().getPort())) {
            byte[] q = Dns.query(5, "slow.example.", Type.A);
            slow.getOutputStream().write(new byte[] {0, (byte) q.length, q[0], q[1], q[2]});
            slow.getOutputStream().flush();
            for (int i = 0; i < 5; i++) {
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.tcp(s.address(), Dns.query(i, "fast.example.", Type.A))));
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(i, "fast.example.", Type.A))));
            }
            slow.setSoTimeout(5000);
            slow.getOutputStream().write(q, 3, q.length - 3);
            assertEquals(5, Dns.id(Dns.readFrame(slow)), "the slow client is served once its frame is whole");
        }
    }

    /** A client that sends its queries and then shuts its side (shutdown(SHUT_WR)) gets every answer, then the close. */
    @Test
    void aHalfClosedConnectionIsAnsweredThenClosed() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "tcp-idle-timeout", "10s");
             Socket c = new Socket(s.address().getAddress(), s.address().getPort())) {
            c.setSoTimeout(5000);
            for (int i = 1; i <= 3; i++) {
                Dns.writeFrame(c, Dns.query(i, "half" + i + ".example.", Type.A));
            }
            c.shutdownOutput();
            long start = System.nanoTime();
            java.util.Set<Integer> ids = new java.util.HashSet<>();
            for (int i = 0; i < 3; i++) {
                byte[] answer = Dns.readFrame(c);
                assertEquals(Rcode.NOERROR, Dns.rcode(answer));
                ids.add(Dns.id(answer));
            }
            assertEquals(java.util.Set.of(1, 2, 3), ids);
            assertEquals(-1, c.getInputStream().read(), "then closed");
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertTrue(ms < 3000, "closed after " + ms + " ms, not at the 10 s idle timeout");
        }
    }

    /** An answer sluice writes itself, in the same wake-up as the client's FIN, still goes out before the close. */
    @Test
    void aHalfClosedConnectionGetsAnAnswerWrittenAtOnce() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "tcp-idle-timeout", "10s");
             Socket c = new Socket(s.address().getAddress(), s.address().getPort())) {
            c.setSoTimeout(5000);
            byte[] noQuestion = java.util.HexFormat.of().parseHex("0a0b01000000000000000000");
            Dns.writeFrame(c, noQuestion);
            c.shutdownOutput();
            assertEquals(Rcode.FORMERR, Dns.rcode(Dns.readFrame(c)));
            assertEquals(-1, c.getInputStream().read(), "then closed");
        }
    }

    /** A connection waiting for its answer is not idle: the upstream's slowness is the forwarder's to bound. */
    @Test
    void aConnectionWaitingForAnAnswerIsNotClosedAsIdle() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "tcp-idle-timeout", "300ms", "timeout", "3s");
             Socket c = new Socket(s.address().getAddress(), s.address().getPort())) {
            up.delayMillis(900);
            c.setSoTimeout(5000);
            Dns.writeFrame(c, Dns.query(4, "slow.example.", Type.A));
            byte[] answer = Dns.readFrame(c);
            assertEquals(4, Dns.id(answer));
            assertEquals(Rcode.NOERROR, Dns.rcode(answer));
            assertEquals(-1, c.getInputStream().read(), "idle once nothing is owed: closed");
        }
    }

    /** 1,500 connections held by one client: another client is still served over TCP, and UDP too. */
    @Test
    void oneClientsConnectionsCannotLockOthersOut() throws Exception {
        List<Socket> held = new java.util.ArrayList<>();
        try (TestUpstream up = new TestUpstream(); RunningSluice s = RunningSluice.start(List.of(up))) {
            try {
                for (int i = 0; i < 1500; i++) {
                    held.add(new Socket(s.address().getAddress(), s.address().getPort()));
                }
                try (Socket other = new Socket()) {
                    other.bind(new java.net.InetSocketAddress("127.0.0.2", 0));
                    other.connect(s.address(), 5000);
                    other.setSoTimeout(5000);
                    Dns.writeFrame(other, Dns.query(7, "other.example.", Type.A));
                    assertEquals(7, Dns.id(Dns.readFrame(other)), "another client is served over TCP");
                }
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(8, "udp.example.", Type.A))));
                assertTrue(s.sluice().metrics().count("tcp_client_limit_rejected") >= 1500 - 32,
                        "past 32 from one address, closed at once");
            } finally {
                for (Socket h : held) {
                    h.close();
                }
            }
        }
    }

    /**
     * A load balancer named in connection-exempt-clients keeps as many connections as it needs;
     * another source is still held to max-tcp-connections-per-client.
     */
    @Test
    void aConnectionExemptSourceIsNotHeldToThePerClientBound() throws Exception {
        List<Socket> open = new java.util.ArrayList<>();
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "max-tcp-connections-per-client", "2",
                     "connection-exempt-clients", "127.0.0.1/32")) {
            try {
                for (int i = 0; i < 5; i++) {
                    Socket c = new Socket(s.address().getAddress(), s.address().getPort());
                    open.add(c);
                    c.setSoTimeout(5000);
                    Dns.writeFrame(c, Dns.query(10 + i, "lb" + i + ".example.", Type.A));
                    assertEquals(10 + i, Dns.id(Dns.readFrame(c)), "connection " + (i + 1) + " from the balancer");
                }
                assertEquals(0, s.sluice().metrics().count("tcp_client_limit_rejected"));
                for (int i = 0; i < 3; i++) {
                    Socket c = new Socket();
                    open.add(c);
                    c.bind(new java.net.InetSocketAddress("127.0.0.2", 0));
                    c.connect(s.address(), 5000);
                }
                Await.until("the third from 127.0.0.2 closed", () -> s.sluice().metrics().count("tcp_client_limit_rejected") == 1);
            } finally {
                for (Socket c : open) {
                    c.close();
                }
            }
        }
    }

    /** {@code n} queries for {@code name} TXT, framed, from ID {@code firstId}: one write's worth. */
    private static byte[] frames(int n, int firstId, String name) {
        byte[][] queries = new byte[n][];
        for (int i = 0; i < n; i++) {
            queries[i] = Dns.query(firstId + i, name, Type.TXT);
        }
        return Dns.frames(queries);
    }

    /** The TCP queries {@code s} has taken, once its one connection stops reading: its answers backed up. */
    private static long tcpQueriesOnceNotReading(RunningSluice s) {
        Await.until("the connection to stop reading", () -> s.sluice().tcpConnectionsNotReading() == 1);
        return s.sluice().metrics().count("queries", "protocol", "tcp");
    }

    /** Asks {@code name} TXT once over {@code c} and reads the answer, so that it is cached. */
    private static void cache(Socket c, String name) throws IOException {
        Dns.writeFrame(c, Dns.query(1, name, Type.TXT));
        assertEquals(1, Dns.id(Dns.readFrame(c)));
    }

    /**
     * Writes {@code bytes} to {@code c} from a thread of its own, which a full socket may block,
     * then half-closes it if {@code thenShutdown}.
     */
    private static void writeAside(Socket c, byte[] bytes, boolean thenShutdown) {
        Thread writer = new Thread(() -> {
            try {
                c.getOutputStream().write(bytes);
                if (thenShutdown) {
                    c.shutdownOutput();
                }
            } catch (IOException closed) {
                // the server closed
            }
        });
        writer.setDaemon(true);
        writer.start();
    }

    /**
     * A client that asks and does not read: 3,000 queries for a cached answer of about 6,000
     * bytes in one write, 18 MB of answers. Sluice stops reading it once its answers back up, so
     * it holds a read's worth of them, not 18 MB; once the client reads, it gets every answer.
     */
    @Test
    void aClientThatDoesNotReadIsNotReadEither() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "cache.size", "1000");
             Socket c = new Socket(s.address().getAddress(), s.address().getPort())) {
            c.setSoTimeout(5000);
            cache(c, TestUpstream.HUGE);
            writeAside(c, frames(3000, 2, TestUpstream.HUGE), false);
            long read = tcpQueriesOnceNotReading(s);
            assertTrue(read < 1000, read + " of 3,001 queries read while its answers were not");
            for (int i = 0; i < 3000; i++) {
                Dns.readFrame(c);
            }
            assertEquals(3001, s.sluice().metrics().count("queries", "protocol", "tcp"), "then every one");
        }
    }

    /**
     * A read's worth of queries whose answers alone are past a MiB (about 40,000 bytes each, 40
     * MB in all): those past the MiB wait as queries, and are answered, in order, as the client
     * reads.
     */
    @Test
    void queriesWhoseAnswersWouldPassAMibWaitAndAreAnsweredInOrder() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "cache.size", "1000");
             Socket c = new Socket(s.address().getAddress(), s.address().getPort())) {
            c.setSoTimeout(5000);
            cache(c, TestUpstream.GIANT);
            writeAside(c, frames(1000, 2, TestUpstream.GIANT), false);
            Await.until("the answers to back up", () -> s.sluice().tcpConnectionsNotReading() == 1);
            for (int i = 0; i < 1000; i++) {
                assertEquals(2 + i, Dns.id(Dns.readFrame(c)));
            }
            try (Socket other = new Socket(s.address().getAddress(), s.address().getPort())) {
                other.setSoTimeout(5000);
                Dns.writeFrame(other, Dns.query(9, "a.example.", Type.A));
                assertEquals(9, Dns.id(Dns.readFrame(other)), "others are served meanwhile");
            }
        }
    }

    /**
     * A stop answers what a connection has read, not only what is in flight: 150 queries for a
     * cached answer of about 40,000 bytes (6 MB), from a client with a small receive buffer that
     * reads nothing until the stop has begun. Past a MiB of answers the queries read wait in the
     * connection, in no forwarder; the stop waits for the client to take their answers, then
     * closes with a FIN (what was not read is read and discarded: a RST would discard answers the
     * kernel still holds).
     */
    @Test
    void aStopAnswersTheQueriesWaitingInAConnection() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "cache.size", "1000", "query-timeout", "20s");
             Socket c = new Socket()) {
            c.setReceiveBufferSize(8192); // before the connect: the window it offers stays small
            c.connect(s.address());
            c.setSoTimeout(5000);
            cache(c, TestUpstream.GIANT);
            writeAside(c, frames(150, 2, TestUpstream.GIANT), false);
            long handled = tcpQueriesOnceNotReading(s);
            assertTrue(handled < 151, "the test needs queries waiting: all " + handled + " handled");
            Thread stop = new Thread(s::close);
            stop.start();
            // Stopped, the connection reads again, to discard what it will not answer, and waits for the client.
            Await.until("the stop to reach the connection", () -> s.sluice().tcpConnectionsNotReading() == 0);
            java.util.Set<Integer> ids = new java.util.HashSet<>();
            try {
                while (true) {
                    ids.add(Dns.id(Dns.readFrame(c)));
                }
            } catch (java.io.EOFException fin) {
                // the end of the answers is a FIN: a reset would throw a SocketException instead
            }
            stop.join(5000);
            assertFalse(stop.isAlive(), "the stop ends once the connection closed");
            long taken = s.sluice().metrics().count("queries", "protocol", "tcp");
            assertTrue(taken > handled, "queries waiting at the stop were taken: " + taken + " after " + handled);
            assertEquals(taken - 1, ids.size(), "every query taken is answered (the first, caching, was read before)");
        }
    }

    /**
     * A client that sends 2 MB of queries, half-closes and reads nothing: it is not read to the
     * end of its input, and once its answers are written, nothing owed, the idle timeout closes it.
     */
    @Test
    void aClientThatHalfClosesAndDoesNotReadIsClosedWhenIdle() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "cache.size", "1000", "tcp-idle-timeout", "500ms");
             Socket c = new Socket(s.address().getAddress(), s.address().getPort())) {
            c.setSoTimeout(5000);
            cache(c, TestUpstream.HUGE);
            writeAside(c, frames(60_000, 2, TestUpstream.HUGE), true);
            Await.until("the idle close", () -> s.sluice().metrics().count("tcp_idle_closed") > 0);
            assertEquals(1, s.sluice().metrics().count("tcp_idle_closed"));
            long read = s.sluice().metrics().count("queries", "protocol", "tcp");
            assertTrue(read < 10_000, read + " of 60,001 queries read");
        }
    }

    @Test
    void anIpv6ClientIsItsSlash64() throws Exception {
        InetAddress host = InetAddress.getByName("2001:db8::1");
        assertEquals(TcpListener.clientOf(host), TcpListener.clientOf(InetAddress.getByName("2001:db8::ffff:1")));
        assertTrue(!TcpListener.clientOf(host).equals(TcpListener.clientOf(InetAddress.getByName("2001:db8:0:1::1"))));
        InetAddress v4 = InetAddress.getByName("192.0.2.7");
        assertEquals(v4, TcpListener.clientOf(v4));
        assertTrue(!v4.equals(TcpListener.clientOf(InetAddress.getByName("192.0.2.8"))));
    }

    /** A frame trickled a byte at a time never completes a query: the idle timeout still closes it. */
    @Test
    void aSlowlorisConnectionIsClosedAtTheIdleTimeout() throws Exception {
        ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor();
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "tcp-idle-timeout", "300ms");
             Socket c = new Socket(s.address().getAddress(), s.address().getPort())) {
            c.getOutputStream().write(new byte[] {0, 64}); // a 64-byte frame, never finished
            AtomicInteger trickled = new AtomicInteger();
            trickle.scheduleAtFixedRate(() -> { // a byte every 50 ms for 2 s
                try {
                    if (trickled.incrementAndGet() <= 40) {
                        c.getOutputStream().write(0);
                    }
                } catch (IOException closed) {
                    // the server closed: the point
                }
            }, 50, 50, TimeUnit.MILLISECONDS);
            c.setSoTimeout(5000);
            long start = System.nanoTime();
            int read;
            try {
                read = c.getInputStream().read();
            } catch (java.net.SocketException reset) {
                read = -1; // closed with a trickled byte still unread, the kernel sends RST, not FIN: closed too
            }
            assertEquals(-1, read, "closed");
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertTrue(ms < 1500, "closed after " + ms + " ms, while it kept trickling for 2 s");
        } finally {
            trickle.shutdownNow();
        }
    }

    @Test
    void aConnectionIsClosedOnceItsQueriesPerConnectionAreAnswered() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "max-tcp-queries-per-connection", "2");
             Socket c = new Socket(s.address().getAddress(), s.address().getPort())) {
            c.setSoTimeout(5000);
            // one write: written one by one, the third could meet the connection already closed (a broken pipe)
            c.getOutputStream().write(Dns.frames(Dns.query(1, "q1.example.", Type.A), Dns.query(2, "q2.example.", Type.A),
                    Dns.query(3, "q3.example.", Type.A)));
            java.util.Set<Integer> ids = new java.util.HashSet<>();
            ids.add(Dns.id(Dns.readFrame(c)));
            ids.add(Dns.id(Dns.readFrame(c)));
            assertEquals(java.util.Set.of(1, 2), ids, "the first two answered");
            assertTrue(ended(c), "then closed; the third is not read");
        }
    }

    @Test
    void aConnectionIsClosedAtItsLongestDuration() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "max-tcp-connection-duration", "400ms");
             Socket c = new Socket(s.address().getAddress(), s.address().getPort())) {
            c.setSoTimeout(5000);
            long start = System.nanoTime();
            Dns.writeFrame(c, Dns.query(1, "d.example.", Type.A));
            assertEquals(1, Dns.id(Dns.readFrame(c)));
            assertEquals(-1, c.getInputStream().read(), "closed");
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertTrue(ms >= 300 && ms < 2000, "closed after " + ms + " ms (idle timeout 10 s)");
        }
    }

    /**
     * Whether the server ended the connection: end of stream, or a reset (a close with the
     * client's unread bytes still in the kernel's buffer is sent as RST).
     */
    private static boolean ended(Socket c) throws IOException {
        try {
            return c.getInputStream().read() == -1;
        } catch (java.net.SocketException reset) {
            return true;
        }
    }
}
