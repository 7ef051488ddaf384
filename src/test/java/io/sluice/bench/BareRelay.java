package io.sluice.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.nio.NioIoOps;
import io.netty.channel.nio.NioSelectableChannelIoHandle;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.uring.IoUringDatagramChannel;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.util.ResourceLeakDetector;
import io.sluice.transport.Transport;
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
 * A reference point for the end-to-end figures, not a forwarder: a bare UDP relay (no limits, no
 * timeouts, no failover, no TCP) that swaps each query's ID for its own and back. It shows what a
 * JVM costs per query on this machine, with and without Netty, apart from sluice.
 * {@code scripts/bench jdk-relay-selector jdk-relay-blocking netty-relay netty-loop-relay} runs it
 * through the harness.
 *
 * <pre>java -cp target/test-classes:target/sluice.jar io.sluice.bench.BareRelay MODE LISTEN_PORT UPSTREAM_PORT</pre>
 *
 * <ul>
 * <li>{@code selector}: the JDK's channels, one thread and one Selector (epoll), the event-loop
 * model sluice uses; reads drained up to 16 per wake-up, each datagram sent at once.
 * <li>{@code blocking}: the JDK's channels in dnsdist's model, one thread blocked reading the
 * clients and forwarding, one blocked reading the upstream and answering.
 * <li>{@code netty}: Netty's native epoll transport as sluice sets it up (one loop, recvmmsg into
 * 16 slots, the pooled allocator, writes flushed once per read batch, no leak detection; replies
 * read into 4 KiB buffers, which hold the harness's answers), with nothing of sluice's.
 * <li>{@code netty-io_uring}: the same on Netty's io_uring transport (a test dependency only): reads
 * and writes queued to the kernel's rings, submitted together once a wake-up.
 * <li>{@code netty-loop}: Netty's NIO event loop without Netty's channels: the JDK's channels
 * registered on it as raw handles (Netty 4.2's {@code NioSelectableChannelIoHandle}), read and
 * written as in {@code selector}.
 * </ul>
 */
public final class BareRelay {
    private static final int READS_PER_WAKEUP = 16;
    private static final int MAX_QUERY_BYTES = 4096;

    private final int listenPort;
    private final int upstreamPort;
    // Not synchronised between the two blocking threads: an entry is written before its query
    // leaves (a system call) and read after its reply came back through another.
    private final SocketAddress[] clientOf = new SocketAddress[65536];
    private final short[] clientId = new short[65536];
    private int nextId;

    private BareRelay(int listenPort, int upstreamPort) {
        this.listenPort = listenPort;
        this.upstreamPort = upstreamPort;
    }

    public static void main(String[] args) throws Exception {
        BareRelay relay = new BareRelay(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
        switch (args[0]) {
            case "selector" -> relay.selectorLoop();
            case "blocking" -> relay.blockingThreads();
            case "netty" -> relay.nettyLoop(EpollIoHandler.newFactory(), EpollDatagramChannel.class);
            case "netty-io_uring" -> relay.nettyLoop(IoUringIoHandler.newFactory(), IoUringDatagramChannel.class);
            case "netty-loop" -> relay.nettyLoopJdkChannels();
            default -> throw new IllegalArgumentException("selector, blocking, netty, netty-io_uring or netty-loop: "
                    + args[0]);
        }
    }

    /** Our ID for a query from {@code from} that carried {@code id}. */
    private int remember(short id, SocketAddress from) {
        int ours = nextId++ & 0xffff;
        clientId[ours] = id;
        clientOf[ours] = from;
        return ours;
    }

    private DatagramChannel[] jdkChannels() throws IOException {
        DatagramChannel clients = DatagramChannel.open();
        clients.setOption(StandardSocketOptions.SO_RCVBUF, Transport.UDP_RCVBUF_BYTES);
        clients.bind(new InetSocketAddress("127.0.0.1", listenPort));
        DatagramChannel upstream = DatagramChannel.open();
        upstream.setOption(StandardSocketOptions.SO_RCVBUF, Transport.UDP_RCVBUF_BYTES);
        upstream.connect(new InetSocketAddress("127.0.0.1", upstreamPort));
        return new DatagramChannel[] {clients, upstream};
    }

    private void selectorLoop() throws IOException {
        DatagramChannel[] ch = jdkChannels();
        ch[0].configureBlocking(false);
        ch[1].configureBlocking(false);
        Selector selector = Selector.open();
        SelectionKey fromClients = ch[0].register(selector, SelectionKey.OP_READ);
        SelectionKey fromUpstream = ch[1].register(selector, SelectionKey.OP_READ);
        ByteBuffer buf = ByteBuffer.allocateDirect(65535);
        Step queries = b -> query(ch, b);
        Step replies = b -> reply(ch, b);
        while (true) {
            selector.select();
            if (fromClients.isReadable()) {
                drain(buf, queries);
            }
            if (fromUpstream.isReadable()) {
                drain(buf, replies);
            }
            selector.selectedKeys().clear();
        }
    }

    private void blockingThreads() throws IOException {
        DatagramChannel[] ch = jdkChannels();
        Thread answering = new Thread(() -> loop(buf -> reply(ch, buf)), "bare-relay-replies");
        answering.setDaemon(true);
        answering.start();
        loop(buf -> query(ch, buf));
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

    /** Runs {@code step} until it finds nothing waiting, at most {@link #READS_PER_WAKEUP} times. */
    private static void drain(ByteBuffer buf, Step step) throws IOException {
        for (int i = 0; i < READS_PER_WAKEUP && step.run(buf); i++) {
            // each run relayed one datagram
        }
    }

    /** Reads one query and sends it upstream under an ID of ours; false when none was waiting. */
    private boolean query(DatagramChannel[] ch, ByteBuffer buf) throws IOException {
        buf.clear();
        SocketAddress from = ch[0].receive(buf);
        if (from == null) {
            return false;
        }
        buf.flip();
        if (buf.remaining() >= 12) {
            buf.putShort(0, (short) remember(buf.getShort(0), from));
            ch[1].write(buf);
        }
        return true;
    }

    /** Reads one reply and sends it to its client under the client's ID; false when none was waiting. */
    private boolean reply(DatagramChannel[] ch, ByteBuffer buf) throws IOException {
        buf.clear();
        if (ch[1].read(buf) <= 0) {
            return false;
        }
        buf.flip();
        if (buf.remaining() >= 12) {
            int id = buf.getShort(0) & 0xffff;
            SocketAddress to = clientOf[id];
            if (to != null) {
                buf.putShort(0, clientId[id]);
                ch[0].send(buf, to);
            }
        }
        return true;
    }

    private void nettyLoopJdkChannels() throws Exception {
        DatagramChannel[] ch = jdkChannels();
        ch[0].configureBlocking(false);
        ch[1].configureBlocking(false);
        IoEventLoop loop = (IoEventLoop) new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory()).next();
        ByteBuffer buf = ByteBuffer.allocateDirect(65535);
        register(loop, ch[0], () -> drain(buf, b -> query(ch, b)));
        register(loop, ch[1], () -> drain(buf, b -> reply(ch, b)));
        loop.terminationFuture().sync();
    }

    private interface Reads {
        void drain() throws IOException;
    }

    private static void register(IoEventLoop loop, DatagramChannel ch, Reads reads) throws Exception {
        loop.register(new NioSelectableChannelIoHandle<>(ch) {
            @Override
            protected void handle(DatagramChannel channel, SelectionKey key) {
                try {
                    reads.drain();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }).sync().getNow().submit(NioIoOps.READ);
    }

    private void nettyLoop(IoHandlerFactory transport, Class<? extends Channel> datagrams) throws InterruptedException {
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED); // as sluice's Main does
        EventLoopGroup loop = new MultiThreadIoEventLoopGroup(1, transport);
        boolean epoll = datagrams == EpollDatagramChannel.class;
        Channel[] ch = new Channel[2];
        ch[1] = new Bootstrap().group(loop).channel(datagrams)
                .option(ChannelOption.ALLOCATOR, Transport.ALLOCATOR)
                .option(ChannelOption.SO_RCVBUF, Transport.UDP_RCVBUF_BYTES)
                .option(ChannelOption.RCVBUF_ALLOCATOR,
                        new FixedRecvByteBufAllocator(MAX_QUERY_BYTES).maxMessagesPerRead(READS_PER_WAKEUP))
                .handler(new SimpleChannelInboundHandler<DatagramPacket>() {
                    @Override
                    protected void channelRead0(ChannelHandlerContext ctx, DatagramPacket reply) {
                        ByteBuf b = reply.content();
                        int id = b.getUnsignedShort(b.readerIndex());
                        if (b.readableBytes() >= 12 && clientOf[id] != null) {
                            b.setShort(b.readerIndex(), clientId[id]);
                            ch[0].write(new DatagramPacket(b.retain(), (InetSocketAddress) clientOf[id]),
                                    ch[0].voidPromise());
                        }
                    }

                    @Override
                    public void channelReadComplete(ChannelHandlerContext ctx) {
                        ch[0].flush();
                    }
                }).connect(new InetSocketAddress("127.0.0.1", upstreamPort)).sync().channel();
        Bootstrap clients = new Bootstrap().group(loop).channel(datagrams)
                .option(ChannelOption.ALLOCATOR, Transport.ALLOCATOR)
                .option(ChannelOption.SO_RCVBUF, Transport.UDP_RCVBUF_BYTES);
        if (epoll) { // recvmmsg into 16 slots, as sluice reads
            clients.option(EpollChannelOption.MAX_DATAGRAM_PAYLOAD_SIZE, MAX_QUERY_BYTES)
                    .option(ChannelOption.RCVBUF_ALLOCATOR,
                            new FixedRecvByteBufAllocator(MAX_QUERY_BYTES * READS_PER_WAKEUP).maxMessagesPerRead(1));
        } else { // io_uring: a recvmsg per datagram, up to 16 queued
            clients.option(ChannelOption.RCVBUF_ALLOCATOR,
                    new FixedRecvByteBufAllocator(MAX_QUERY_BYTES).maxMessagesPerRead(READS_PER_WAKEUP));
        }
        ch[0] = clients
                .handler(new SimpleChannelInboundHandler<DatagramPacket>() {
                    @Override
                    protected void channelRead0(ChannelHandlerContext ctx, DatagramPacket query) {
                        ByteBuf b = query.content();
                        if (b.readableBytes() >= 12) {
                            b.setShort(b.readerIndex(), remember(b.getShort(b.readerIndex()), query.sender()));
                            ch[1].write(b.retain(), ch[1].voidPromise());
                        }
                    }

                    @Override
                    public void channelReadComplete(ChannelHandlerContext ctx) {
                        ch[1].flush();
                    }
                }).bind(new InetSocketAddress("127.0.0.1", listenPort)).sync().channel();
        ch[0].closeFuture().sync();
    }
}
