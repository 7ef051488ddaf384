package io.sluice.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;

/**
 * A reference point for the end-to-end figures, not a forwarder: a bare UDP relay on the JDK's own
 * channels (no Netty, no limits, no timeouts, no failover), which swaps each query's ID for its own
 * and back. It shows what a JVM costs per query on this machine, apart from Netty and from sluice.
 * {@code scripts/bench jdk-relay-selector jdk-relay-blocking} runs it through the harness.
 *
 * <pre>java -cp target/test-classes io.sluice.bench.JdkRelay selector|blocking LISTEN_PORT UPSTREAM_PORT</pre>
 *
 * {@code selector}: one thread and one Selector (epoll), the event-loop model sluice uses, reads
 * drained up to 16 per wake-up, each datagram sent at once. {@code blocking}: dnsdist's model, one
 * thread blocked reading the clients and forwarding, one blocked reading the upstream and answering.
 */
public final class JdkRelay {
    private static final int READS_PER_WAKEUP = 16;

    private final DatagramChannel clients;
    private final DatagramChannel upstream;
    // Not synchronised between the two blocking threads: an entry is written before its query
    // leaves (a system call) and read after its reply came back through another.
    private final SocketAddress[] clientOf = new SocketAddress[65536];
    private final short[] clientId = new short[65536];
    private int nextId;

    private JdkRelay(int listenPort, int upstreamPort) throws IOException {
        clients = DatagramChannel.open();
        clients.setOption(StandardSocketOptions.SO_RCVBUF, 4 << 20);
        clients.bind(new InetSocketAddress("127.0.0.1", listenPort));
        upstream = DatagramChannel.open();
        upstream.setOption(StandardSocketOptions.SO_RCVBUF, 4 << 20);
        upstream.connect(new InetSocketAddress("127.0.0.1", upstreamPort));
    }

    public static void main(String[] args) throws Exception {
        JdkRelay relay = new JdkRelay(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
        switch (args[0]) {
            case "selector" -> relay.selectorLoop();
            case "blocking" -> relay.blockingThreads();
            default -> throw new IllegalArgumentException("selector or blocking: " + args[0]);
        }
    }

    private void selectorLoop() throws IOException {
        clients.configureBlocking(false);
        upstream.configureBlocking(false);
        Selector selector = Selector.open();
        SelectionKey fromClients = clients.register(selector, SelectionKey.OP_READ);
        SelectionKey fromUpstream = upstream.register(selector, SelectionKey.OP_READ);
        ByteBuffer buf = ByteBuffer.allocateDirect(65535);
        while (true) {
            selector.select();
            for (int i = 0; fromClients.isReadable() && i < READS_PER_WAKEUP && query(buf); i++) {
                // each call forwarded one query
            }
            for (int i = 0; fromUpstream.isReadable() && i < READS_PER_WAKEUP && reply(buf); i++) {
                // each call answered one client
            }
            selector.selectedKeys().clear();
        }
    }

    private void blockingThreads() throws InterruptedException {
        Thread answering = new Thread(() -> loop(this::reply), "jdk-relay-replies");
        answering.setDaemon(true);
        answering.start();
        loop(this::query);
    }

    private interface Step {
        boolean run(ByteBuffer buf) throws IOException;
    }

    private static void loop(Step step) {
        ByteBuffer buf = ByteBuffer.allocateDirect(65535);
        try {
            while (true) {
                step.run(buf);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Reads one query and sends it upstream under an ID of ours; false when none was waiting. */
    private boolean query(ByteBuffer buf) throws IOException {
        buf.clear();
        SocketAddress from = clients.receive(buf);
        if (from == null) {
            return false;
        }
        buf.flip();
        if (buf.remaining() >= 12) {
            int id = nextId++ & 0xffff;
            clientId[id] = buf.getShort(0);
            clientOf[id] = from;
            buf.putShort(0, (short) id);
            upstream.write(buf);
        }
        return true;
    }

    /** Reads one reply and sends it to its client under the client's ID; false when none was waiting. */
    private boolean reply(ByteBuffer buf) throws IOException {
        buf.clear();
        if (upstream.read(buf) <= 0) {
            return false;
        }
        buf.flip();
        if (buf.remaining() >= 12) {
            int id = buf.getShort(0) & 0xffff;
            SocketAddress to = clientOf[id];
            if (to != null) {
                buf.putShort(0, clientId[id]);
                clients.send(buf, to);
            }
        }
        return true;
    }
}
