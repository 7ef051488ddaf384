package io.sluice.forward;

import io.sluice.testing.Dns;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.BitSet;
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
     * paced lightly, then collects replies for up to 10 seconds.
     */
    static Result udp(InetSocketAddress server, int n, int sockets) throws IOException, InterruptedException {
        DatagramChannel[] chans = new DatagramChannel[sockets];
        for (int i = 0; i < sockets; i++) {
            chans[i] = DatagramChannel.open(StandardProtocolFamily.INET);
            chans[i].setOption(StandardSocketOptions.SO_RCVBUF, 1 << 20);
            chans[i].configureBlocking(false);
            chans[i].connect(server);
        }
        try {
            for (int i = 0; i < n; i++) {
                chans[i % sockets].write(ByteBuffer.wrap(Dns.query(i, "q" + i + ".example.", Type.A)));
                if (i % 50 == 49) {
                    Thread.sleep(1);
                }
            }
            BitSet seen = new BitSet(n);
            int wrong = 0;
            ByteBuffer buf = ByteBuffer.allocate(65535);
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (seen.cardinality() + wrong < n && System.nanoTime() < deadline) {
                boolean any = false;
                for (DatagramChannel c : chans) {
                    buf.clear();
                    if (c.read(buf) > 0) {
                        any = true;
                        buf.flip();
                        byte[] b = new byte[buf.remaining()];
                        buf.get(b);
                        Message m = new Message(b);
                        int id = m.getHeader().getID();
                        if (id < n && m.getQuestion().getName().toString().equals("q" + id + ".example.")) {
                            seen.set(id);
                        } else {
                            wrong++;
                        }
                    }
                }
                if (!any) {
                    Thread.sleep(1);
                }
            }
            return new Result(seen.cardinality(), wrong);
        } finally {
            for (DatagramChannel c : chans) {
                c.close();
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
