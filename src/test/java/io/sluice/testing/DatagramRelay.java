package io.sluice.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A UDP relay of real datagrams between its clients and one server, on 127.0.0.1, that loses or
 * delays them as told: the network fault between sluice and its upstream, made with sockets. Each
 * client's source address gets a socket of its own toward the server, so that replies find their
 * way back and the server sees one source per client source, as through a NAT.
 */
public final class DatagramRelay implements AutoCloseable {
    /** What happens to a datagram going one way: dropped, or passed on after a delay, once or more. */
    @FunctionalInterface
    public interface Fault {
        /** The delay in milliseconds before the {@code n}-th datagram this way (from 1) goes on, or -1 to drop it. */
        long delayMillis(int n);

        /** How many copies of the {@code n}-th datagram go on (a duplicate is sent as the datagram is). */
        default int copies(int n) {
            return 1;
        }
    }

    public static final Fault NONE = n -> 0;

    private final DatagramChannel front;
    private final InetSocketAddress server;
    private final Map<SocketAddress, DatagramChannel> toServer = new ConcurrentHashMap<>();
    private final ScheduledExecutorService delays = Executors.newSingleThreadScheduledExecutor();
    private final AtomicInteger queries = new AtomicInteger();
    private final AtomicInteger replies = new AtomicInteger();
    private final AtomicInteger dropped = new AtomicInteger();
    private volatile Fault queryFault = NONE;
    private volatile Fault replyFault = NONE;
    private volatile boolean closed;

    public DatagramRelay(InetSocketAddress server) throws IOException {
        this.server = server;
        this.front = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        Thread t = new Thread(this::relayQueries, "relay-queries");
        t.setDaemon(true);
        t.start();
    }

    /** Drops {@code fraction} of the datagrams going {@code toServer} or back, at random from {@code seed}. */
    public static Fault losing(double fraction, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        return n -> {
            synchronized (random) {
                return random.nextDouble() < fraction ? -1 : 0;
            }
        };
    }

    public void queries(Fault f) {
        queryFault = f;
    }

    public void replies(Fault f) {
        replyFault = f;
    }

    public InetSocketAddress address() throws IOException {
        return (InetSocketAddress) front.getLocalAddress();
    }

    public String hostPort() throws IOException {
        return "127.0.0.1:" + address().getPort();
    }

    /** Datagrams toward the server so far, dropped ones included. */
    public int queries() {
        return queries.get();
    }

    /** The source addresses the relay has relayed from, each with its own socket toward the server. */
    public int sources() {
        return toServer.size();
    }

    public int dropped() {
        return dropped.get();
    }

    private void relayQueries() {
        ByteBuffer buf = ByteBuffer.allocate(65535);
        while (!closed) {
            try {
                buf.clear();
                SocketAddress client = front.receive(buf);
                buf.flip();
                DatagramChannel out = toServer.computeIfAbsent(client, this::openToServer);
                int n = queries.incrementAndGet();
                Fault f = queryFault;
                pass(f.delayMillis(n), f.copies(n), copy(buf), out, server);
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException | RuntimeException e) {
                if (!closed) {
                    e.printStackTrace();
                }
            }
        }
    }

    private DatagramChannel openToServer(SocketAddress client) {
        try {
            DatagramChannel out = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
            Thread t = new Thread(() -> relayReplies(out, client), "relay-replies");
            t.setDaemon(true);
            t.start();
            return out;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private void relayReplies(DatagramChannel out, SocketAddress client) {
        ByteBuffer buf = ByteBuffer.allocate(65535);
        while (!closed) {
            try {
                buf.clear();
                out.receive(buf);
                buf.flip();
                int n = replies.incrementAndGet();
                Fault f = replyFault;
                pass(f.delayMillis(n), f.copies(n), copy(buf), front, client);
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                if (!closed) {
                    e.printStackTrace();
                }
            }
        }
    }

    private void pass(long delay, int copies, ByteBuffer datagram, DatagramChannel via, SocketAddress to)
            throws IOException {
        if (delay < 0) {
            dropped.incrementAndGet();
            return;
        }
        for (int i = 0; i < copies; i++) {
            ByteBuffer one = datagram.duplicate();
            if (delay == 0) {
                via.send(one, to);
            } else {
                delays.schedule(() -> {
                    try {
                        via.send(one, to);
                    } catch (IOException e) {
                        // closed meanwhile: the datagram is lost, as on a wire
                    }
                }, delay, TimeUnit.MILLISECONDS);
            }
        }
    }

    private static ByteBuffer copy(ByteBuffer b) {
        ByteBuffer c = ByteBuffer.allocate(b.remaining());
        c.put(b).flip();
        return c;
    }

    @Override
    public void close() throws IOException {
        closed = true;
        delays.shutdownNow();
        front.close();
        for (DatagramChannel c : toServer.values()) {
            c.close();
        }
    }
}
