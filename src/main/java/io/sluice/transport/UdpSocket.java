package io.sluice.transport;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.util.concurrent.Future;
import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;

/**
 * A UDP socket read and written through the JDK's {@link DatagramChannel}, watched by an event
 * loop: the loop's epoll set tells when it is readable, and the owner's {@link Reader} then reads
 * it dry (or up to its own bound) on that loop.
 *
 * <p>Not Netty's datagram channel: that one costs more CPU a datagram on this path (its pipeline
 * and outbound buffer per write, its JNI for recvmmsg and sendmmsg, a {@code getsockopt} before
 * each read), for forwarded queries and cache hits alike, and adds latency below saturation
 * (docs/benchmarks.md, "UDP on the JDK's channels"). The JDK reads and sends one datagram a system
 * call; on JDK 22+ the owners read and send through {@link DatagramIo}'s batches instead, and in
 * both a wake-up's datagrams leave after its reads ({@code WriteBatch}).
 *
 * <p>Confined to its loop, but for {@link #stopReading} and {@link #close}, which run there.
 */
public final class UdpSocket {
    /** Called on the loop when the socket has datagrams waiting. */
    @FunctionalInterface
    public interface Reader {
        void readable(UdpSocket socket);
    }

    private final DatagramChannel channel;
    private final EventLoop loop;
    private final InetSocketAddress local;
    /** Whether the socket is IPv6's (which reaches IPv4 peers at mapped addresses). */
    private final boolean ipv6;
    private IoRegistration registration;
    private final Transport transport;
    /** The kernel's descriptor, once asked for; -1 before. */
    private int descriptor = -1;

    private UdpSocket(DatagramChannel channel, EventLoop loop, Transport transport) throws IOException {
        this.channel = channel;
        this.loop = loop;
        this.transport = transport;
        this.local = (InetSocketAddress) channel.getLocalAddress();
        this.ipv6 = local.getAddress() instanceof Inet6Address;
    }

    /**
     * A socket bound to {@code at}, to be read by {@code reader} on {@code loop} from
     * {@link #startReading}: the kernel queues what arrives meanwhile.
     *
     * @param reusePort whether other sockets may bind the same address (SO_REUSEPORT), one per loop
     */
    public static UdpSocket bind(Transport transport, EventLoop loop, InetSocketAddress at, boolean reusePort,
                                 Reader reader) throws IOException, InterruptedException {
        DatagramChannel ch = open(at);
        try {
            if (reusePort) {
                ch.setOption(StandardSocketOptions.SO_REUSEPORT, true);
            }
            ch.bind(at);
            return watched(transport, loop, ch, reader, false);
        } catch (IOException | InterruptedException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /**
     * A socket connected to {@code peer} from a port the kernel picks, read by {@code reader} on
     * {@code loop}: the kernel delivers it datagrams from {@code peer} only.
     */
    public static UdpSocket connect(Transport transport, EventLoop loop, InetSocketAddress peer, Reader reader)
            throws IOException, InterruptedException {
        DatagramChannel ch = open(peer);
        try {
            ch.connect(peer);
            return watched(transport, loop, ch, reader, true);
        } catch (IOException | InterruptedException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    private static DatagramChannel open(InetSocketAddress of) throws IOException {
        DatagramChannel ch = DatagramChannel.open(of.getAddress() instanceof Inet6Address
                ? StandardProtocolFamily.INET6 : StandardProtocolFamily.INET);
        ch.setOption(StandardSocketOptions.SO_RCVBUF, Transport.UDP_RCVBUF_BYTES);
        ch.configureBlocking(false);
        return ch;
    }

    private static UdpSocket watched(Transport transport, EventLoop loop, DatagramChannel ch, Reader reader,
                                     boolean readNow) throws IOException, InterruptedException {
        UdpSocket s = new UdpSocket(ch, loop, transport);
        Future<IoRegistration> f = ((IoEventLoop) loop).register(transport.readHandle(ch, () -> reader.readable(s)));
        if (!loop.inEventLoop()) {
            f.sync();
        }
        // On its own loop, registering is done by the time register returns.
        s.registration = f.getNow();
        if (s.registration == null) {
            throw new IOException("the event loop did not take the socket", f.cause());
        }
        if (readNow) {
            s.registration.submit(transport.readOps());
        }
        return s;
    }

    /**
     * Starts reading a {@link #bind bound} socket. From outside its loop; throws what the loop
     * met (the epoll registration refused), so that a start never goes on with a socket unread.
     */
    public void startReading() {
        loop.submit(() -> registration.submit(transport.readOps())).syncUninterruptibly();
    }

    /**
     * Reads one datagram into {@code into} from its position; returns its sender, or null when
     * none was waiting.
     */
    public InetSocketAddress receive(ByteBuffer into) throws IOException {
        return (InetSocketAddress) channel.receive(into);
    }

    /** Reads one datagram from the connected peer into {@code into}; returns its length, or 0 when none was waiting. */
    public int read(ByteBuffer into) throws IOException {
        return Math.max(0, channel.read(into));
    }

    /**
     * Sends {@code message}'s readable bytes to {@code to}; false when the kernel did not take them
     * (its send buffer full), as a datagram lost on the way.
     */
    public boolean send(ByteBuf message, InetSocketAddress to) throws IOException {
        return channel.send(view(message), to) > 0;
    }

    /** Sends {@code message}'s readable bytes to the connected peer; false when the kernel did not take them. */
    public boolean write(ByteBuf message) throws IOException {
        return channel.write(view(message)) > 0;
    }

    /** The readable bytes as one NIO buffer; the pooled buffers sluice writes need no new object for it. */
    private static ByteBuffer view(ByteBuf m) {
        return m.nioBufferCount() == 1 ? m.internalNioBuffer(m.readerIndex(), m.readableBytes()) : m.nioBuffer();
    }

    /**
     * The kernel's descriptor of the socket, for options the JDK does not set (UDP steering) and
     * for {@link DatagramIo}'s batches; valid while {@link #isOpen}.
     */
    public int descriptor() {
        int fd = descriptor;
        if (fd < 0) {
            descriptor = fd = Descriptors.of(channel); // the same from any thread that asks
        }
        return fd;
    }

    /**
     * Whether the socket is still open. Asked on its loop, where it is closed, it holds until the
     * loop's next task: its descriptor is not yet another socket's.
     */
    public boolean isOpen() {
        return channel.isOpen();
    }

    /** Whether the socket is IPv6's, which reaches an IPv4 peer at its mapped address. */
    public boolean ipv6() {
        return ipv6;
    }

    public InetSocketAddress localAddress() {
        return local;
    }

    /** Stops watching the socket; it still sends. From any thread. */
    public void stopReading() {
        onLoop(this::unwatch);
    }

    private void unwatch() {
        if (registration.isValid()) {
            registration.cancel();
        }
    }

    /**
     * Closes the socket, on its loop: the loop forgets the descriptor before the kernel may give
     * its number to a new socket. From any thread.
     */
    public void close() {
        onLoop(this::closeNow);
    }

    /** Runs {@code action} on the loop and waits for it; here and now once the loop is stopping. */
    private void onLoop(Runnable action) {
        if (loop.inEventLoop() || loop.isShuttingDown()) {
            action.run();
        } else {
            loop.submit(action).awaitUninterruptibly();
        }
    }

    private void closeNow() {
        unwatch();
        try {
            channel.close();
        } catch (IOException e) {
            // closing: nothing to tell anyone
        }
    }
}
