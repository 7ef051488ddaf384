package io.sluice.forward;

import io.sluice.testing.Await;
import io.sluice.testing.Dns;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.BitSet;
import java.util.function.IntSupplier;
import org.xbill.DNS.Message;
import org.xbill.DNS.Type;

/** Many queries in flight at once from real client sockets. */
final class Concurrent {
    private Concurrent() {
    }

    record Result(int answered, int wrongAnswers) {
    }

    /**
     * Sends {@code n} queries (distinct names and IDs) spread over {@code sockets} client sockets,
     * 50 at a time, each 50 once those before them reached the upstream, whose count of queries
     * received is {@code upstreamQueries}; then collects replies for up to 10 seconds.
     */
    static Result udp(InetSocketAddress server, int n, int sockets, IntSupplier upstreamQueries) throws IOException {
        DatagramChannel[] chans = new DatagramChannel[sockets];
        try (Selector readable = Selector.open()) {
            for (int i = 0; i < sockets; i++) {
                chans[i] = DatagramChannel.open(StandardProtocolFamily.INET);
                chans[i].setOption(StandardSocketOptions.SO_RCVBUF, 1 << 20);
                chans[i].configureBlocking(false);
                chans[i].connect(server);
                chans[i].register(readable, SelectionKey.OP_READ);
            }
            int before = upstreamQueries.getAsInt();
            for (int i = 0; i < n; i++) {
                chans[i % sockets].write(ByteBuffer.wrap(Dns.query(i, "q" + i + ".example.", Type.A)));
                if (i % 50 == 49) { // a burst sluice's receive buffer holds
                    int sent = i + 1;
                    Await.until("the queries before the last 50 forwarded",
                            () -> upstreamQueries.getAsInt() - before >= sent - 50);
                }
            }
            BitSet seen = new BitSet(n);
            int wrong = 0;
            ByteBuffer buf = ByteBuffer.allocate(65535);
            long deadline = System.nanoTime() + 10_000_000_000L;
            for (long left = 10_000; seen.cardinality() + wrong < n && left > 0;
                    left = (deadline - System.nanoTime()) / 1_000_000) {
                readable.select(left); // until a reply comes
                readable.selectedKeys().clear();
                for (DatagramChannel c : chans) {
                    buf.clear();
                    while (c.read(buf) > 0) {
                        buf.flip();
                        byte[] b = new byte[buf.remaining()];
                        buf.get(b);
                        buf.clear();
                        Message m = new Message(b);
                        int id = m.getHeader().getID();
                        if (id < n && m.getQuestion().getName().toString().equals("q" + id + ".example.")) {
                            seen.set(id);
                        } else {
                            wrong++;
                        }
                    }
                }
            }
            return new Result(seen.cardinality(), wrong);
        } finally {
            for (DatagramChannel c : chans) {
                if (c != null) {
                    c.close();
                }
            }
        }
    }

    /** Writes {@code n} queries on one TCP connection before reading any reply; returns replies matched. */
    static int tcpPipelined(InetSocketAddress server, int n) throws IOException {
        try (Socket s = new Socket(server.getAddress(), server.getPort())) {
            s.setSoTimeout(5000);
            for (int i = 0; i < n; i++) {
                Dns.writeFrame(s, Dns.query(i, "t" + i + ".example.", Type.A));
            }
            BitSet seen = new BitSet(n);
            for (int i = 0; i < n; i++) {
                Message m = new Message(Dns.readFrame(s));
                int id = m.getHeader().getID();
                if (m.getQuestion().getName().toString().equals("t" + id + ".example.")) {
                    seen.set(id);
                }
            }
            return seen.cardinality();
        }
    }
}
