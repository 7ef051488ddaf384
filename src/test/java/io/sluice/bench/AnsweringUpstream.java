package io.sluice.bench;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
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
 * queries.
 */
final class AnsweringUpstream implements AutoCloseable {
    private final DatagramSocket socket = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0));
    private final ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();
    private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();
    private final Thread reader;
    private final long delayMillis;

    AnsweringUpstream(long delayMillis) throws IOException {
        this.delayMillis = delayMillis;
        socket.setReceiveBufferSize(4 << 20);
        reader = new Thread(this::serve, "answering-upstream");
        reader.setDaemon(true);
        reader.start();
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
                Record question = q.getQuestion();
                if (question == null) {
                    continue;
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
                a.addRecord(new ARecord(question.getName(), DClass.IN, 60,
                        java.net.InetAddress.getByName("192.0.2.1")), Section.ANSWER);
                if (q.getOPT() != null) {
                    a.addRecord(new org.xbill.DNS.OPTRecord(1232, 0, 0), Section.ADDITIONAL);
                }
                byte[] out = a.toWire();
                var to = p.getSocketAddress();
                Runnable send = () -> {
                    try {
                        socket.send(new DatagramPacket(out, out.length, to));
                    } catch (IOException e) {
                        // closed at the end
                    }
                };
                if (name.equals("ready.example.") || delayMillis == 0) {
                    send.run();
                } else {
                    later.schedule(send, delayMillis, TimeUnit.MILLISECONDS);
                }
            } catch (IOException e) {
                if (socket.isClosed()) {
                    return;
                }
            }
        }
    }

    @Override
    public void close() {
        socket.close();
        later.shutdownNow();
    }
}
