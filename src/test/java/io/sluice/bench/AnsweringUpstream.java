package io.sluice.bench;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;

/**
 * The load tools' upstream on 127.0.0.1: answers every name with an A record (192.0.2.1),
 * {@code ready.example.} at once and every other after {@code delayMillis}, and counts each name's
 * queries. Over UDP, and over TCP on the same port number (a thread per connection).
 */
final class AnsweringUpstream implements AutoCloseable {
    private final DatagramSocket socket = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0));
    private final ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();
    private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();
    private final ServerSocket tcp;
    private final long delayMillis;

    AnsweringUpstream(long delayMillis) throws IOException {
        this.delayMillis = delayMillis;
        socket.setReceiveBufferSize(4 << 20);
        tcp = new ServerSocket(socket.getLocalPort(), 50, InetAddress.getLoopbackAddress());
        start(this::serve, "answering-upstream");
        start(this::acceptTcp, "answering-upstream-tcp");
    }

    private static void start(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    int port() {
        return socket.getLocalPort();
    }

    long queries(String name) {
        AtomicInteger n = counts.get(name.toLowerCase());
        return n == null ? 0 : n.get();
    }

    private void serve() {
        byte[] buf = new byte[65_535];
        while (!socket.isClosed()) {
            DatagramPacket p = new DatagramPacket(buf, buf.length);
            try {
                socket.receive(p);
                Message q = new Message(Arrays.copyOf(buf, p.getLength()));
                byte[] out = answer(q);
                if (out == null) {
                    continue;
                }
                var to = p.getSocketAddress();
                reply(q, () -> {
                    try {
                        socket.send(new DatagramPacket(out, out.length, to));
                    } catch (IOException e) {
                        // closed at the end
                    }
                });
            } catch (IOException e) {
                if (socket.isClosed()) {
                    return;
                }
            }
        }
    }

    private void acceptTcp() {
        while (!tcp.isClosed()) {
            try {
                Socket c = tcp.accept();
                c.setTcpNoDelay(true);
                start(() -> serveTcp(c), "answering-upstream-connection");
            } catch (IOException e) {
                return; // closed at the end
            }
        }
    }

    /** Answers each framed query of {@code c} (RFC 1035 4.2.2), in any order, until it closes. */
    private void serveTcp(Socket c) {
        try (c; DataInputStream in = new DataInputStream(c.getInputStream())) {
            DataOutputStream out = new DataOutputStream(c.getOutputStream());
            while (true) {
                byte[] wire = new byte[in.readUnsignedShort()];
                in.readFully(wire);
                Message q = new Message(wire);
                byte[] a = answer(q);
                if (a != null) {
                    reply(q, () -> {
                        synchronized (out) {
                            try {
                                out.writeShort(a.length);
                                out.write(a);
                                out.flush();
                            } catch (IOException e) {
                                // the connection went
                            }
                        }
                    });
                }
            }
        } catch (IOException e) {
            // closed by the other end, or at the end
        }
    }

    /** Sends now or after the delay: {@code ready.example.} always now. */
    private void reply(Message q, Runnable send) {
        if (delayMillis == 0 || q.getQuestion().getName().toString().equalsIgnoreCase("ready.example.")) {
            send.run();
        } else {
            later.schedule(send, delayMillis, TimeUnit.MILLISECONDS);
        }
    }

    /** The answer to {@code q}, counted; null for a message without a question. */
    private byte[] answer(Message q) throws IOException {
        Record question = q.getQuestion();
        if (question == null) {
            return null;
        }
        String name = question.getName().toString().toLowerCase();
        counts.computeIfAbsent(name, k -> new AtomicInteger()).incrementAndGet();
        Message a = new Message(q.getHeader().getID());
        a.getHeader().setFlag(Flags.QR);
        a.getHeader().setFlag(Flags.AA);
        if (q.getHeader().getFlag(Flags.RD)) {
            a.getHeader().setFlag(Flags.RD);
        }
        a.addRecord(question, Section.QUESTION);
        a.addRecord(new ARecord(question.getName(), DClass.IN, 60, InetAddress.getByName("192.0.2.1")), Section.ANSWER);
        if (q.getOPT() != null) {
            a.addRecord(new org.xbill.DNS.OPTRecord(1232, 0, 0), Section.ADDITIONAL);
        }
        return a.toWire();
    }

    @Override
    public void close() {
        socket.close();
        try {
            tcp.close();
        } catch (IOException e) {
            // closing anyway
        }
        later.shutdownNow();
    }
}
