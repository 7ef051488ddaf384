package io.sluice.stress;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.DatagramPacket;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import io.netty.util.concurrent.Future;
import io.sluice.transport.TcpFraming;
import io.sluice.transport.Transport;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;

/**
 * Sends one share of a run's queries from one event loop thread and matches the answers; a run
 * has one generator per {@code --threads}.
 *
 * <p>Closed loop (the default, as dnsstresss): {@code concurrency} queries in flight; each answer
 * or timeout sends the next. Flood ({@code -f}): send as fast as the loop can, answers or not.
 * Open loop ({@code --rate}): send on a fixed schedule; latency is counted from the instant a query
 * was due, so a server that stalls cannot hide its stall by slowing the sender.
 *
 * <p>Everything here runs on the one loop thread: no locks. Writes are flushed once per batch of
 * reads or sends, so that the kernel gets several datagrams per syscall.
 */
final class LoadGenerator {
    private static final int FLOOD_BATCH = 64;
    private static final long RATE_TICK_MICROS = 500;
    private static final int MAX_MESSAGE_BYTES = 65535;

    /**
     * @param tls   over TLS (DNS over TLS): TCP in TLS, the server's certificate taken as it is
     * @param https over HTTPS (DNS over HTTPS): HTTP/2 in TLS, a stream per query
     */
    record Options(InetSocketAddress target, int concurrency, boolean flood, long rate, boolean randomIds,
                   boolean tcp, boolean tls, boolean https, long timeoutNanos, int sockets, boolean verbose) {
    }

    private final Options options;
    private final QueryMaker queries;
    private final PrintStream verboseOut;
    RunStats stats = new RunStats();
    private final List<Link> links = new ArrayList<>();
    private final SplittableRandom random = new SplittableRandom();
    private final long[] ringKeys = new long[1 << 20];
    private final long[] ringTimes = new long[1 << 20];
    private int ringHead;
    private int ringSize;
    private EventLoopGroup group;
    private EventLoop loop;
    private boolean stopping;
    private int nextLink;
    private long pending;
    private long rateStart;
    private long rateSent;

    LoadGenerator(Options options, QueryMaker queries, PrintStream verboseOut) {
        this.options = options;
        this.queries = queries;
        this.verboseOut = verboseOut;
    }

    /** One socket or connection to the target, and which of its IDs are in flight since when. */
    private final class Link {
        final int index;
        final long[] sentAt = new long[65536];
        Channel channel;
        int nextId;
        int inFlight;
        boolean dead;

        Link(int index) {
            this.index = index;
            this.nextId = random.nextInt(65536);
        }

        /** A free ID, or -1 when all 65,536 are in flight. */
        int claimId() {
            if (inFlight == 65536) {
                return -1;
            }
            int id = options.randomIds() ? random.nextInt(65536) : nextId;
            while (sentAt[id] != 0) {
                id = (id + 1) & 0xFFFF;
            }
            nextId = (id + 1) & 0xFFFF;
            return id;
        }
    }

    /**
     * A TLS client that takes any certificate: a load tool measures the server, and its operator
     * points it at the server meant (dnsperf's {@code -m dot} does not verify either).
     */
    private static SslContext clientTls(String... alpn) {
        try {
            SslContextBuilder b = SslContextBuilder.forClient().trustManager(InsecureTrustManagerFactory.INSTANCE);
            if (alpn.length > 0) {
                b.applicationProtocolConfig(new ApplicationProtocolConfig(ApplicationProtocolConfig.Protocol.ALPN,
                        ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                        ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT, alpn));
            }
            return b.build();
        } catch (SSLException e) {
            throw new IllegalStateException("no TLS client: " + e.getMessage(), e);
        }
    }

    /** Connects the sockets and starts sending; returns once the first queries are out. */
    void start() throws InterruptedException {
        Transport transport = Transport.best();
        group = transport.newGroup(1, "dnsstress");
        loop = group.next();
        for (int i = 0; i < options.sockets(); i++) {
            Link link = new Link(i);
            Bootstrap b = new Bootstrap().group(loop);
            if (options.https()) {
                SslContext tls = clientTls(ApplicationProtocolNames.HTTP_2);
                String authority = options.target().getHostString() + ":" + options.target().getPort();
                b.channelFactory(transport.socket())
                        .option(ChannelOption.TCP_NODELAY, true)
                        .handler(new ChannelInitializer<>() {
                            @Override
                            protected void initChannel(Channel ch) {
                                ch.pipeline().addLast(tls.newHandler(ch.alloc()),
                                        Http2FrameCodecBuilder.forClient().build(),
                                        new DohStreams(authority), new Replies(link));
                            }
                        });
            } else if (options.tcp() || options.tls()) {
                SslContext tls = options.tls() ? clientTls() : null;
                b.channelFactory(transport.socket())
                        .option(ChannelOption.TCP_NODELAY, true)
                        .handler(new ChannelInitializer<>() {
                            @Override
                            protected void initChannel(Channel ch) {
                                if (tls != null) { // queries written before the handshake wait in it
                                    ch.pipeline().addLast(tls.newHandler(ch.alloc()));
                                }
                                TcpFraming.addTo(ch.pipeline());
                                ch.pipeline().addLast(new Replies(link));
                            }
                        });
            } else {
                b.channelFactory(() -> transport.datagram(Transport.familyOf(options.target().getAddress())))
                        .option(ChannelOption.SO_RCVBUF, 4 << 20)
                        .option(ChannelOption.RCVBUF_ALLOCATOR, new FixedRecvByteBufAllocator(MAX_MESSAGE_BYTES))
                        .handler(new Replies(link));
            }
            link.channel = b.connect(options.target()).sync().channel();
            links.add(link);
        }
        long tick = Math.max(1, Math.min(100, options.timeoutNanos() / 4_000_000));
        loop.submit(() -> {
            loop.scheduleAtFixedRate(this::expire, tick, tick, TimeUnit.MILLISECONDS);
            if (options.rate() > 0) {
                rateStart = System.nanoTime();
                loop.scheduleAtFixedRate(this::sendDue, 0, RATE_TICK_MICROS, TimeUnit.MICROSECONDS);
            } else if (options.flood()) {
                loop.execute(this::pump);
            } else {
                for (int i = 0; i < options.concurrency(); i++) {
                    send(System.nanoTime());
                }
                flush();
            }
        }).sync();
    }

    /** Stops sending, waits for answers still due (up to the timeout), and releases the sockets. */
    void stop() throws InterruptedException {
        loop.submit(() -> stopping = true).sync();
        long deadline = System.nanoTime() + options.timeoutNanos();
        while (System.nanoTime() < deadline && loop.submit(() -> pending).syncUninterruptibly().getNow() > 0) {
            Thread.sleep(5);
        }
        loop.submit(() -> {
            // whatever is still out now has had its whole timeout
            while (ringSize > 0) {
                expireHead(Long.MAX_VALUE);
            }
        }).sync();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }

    private void send(long dueNanos) {
        Link link = nextLink();
        if (link == null) {
            return;
        }
        int id = link.claimId();
        if (id < 0) {
            return;
        }
        ByteBuf q = link.channel.alloc().buffer(96);
        queries.write(q, id);
        link.sentAt[id] = dueNanos;
        link.inFlight++;
        pending++;
        remember(link.index, id, dueNanos);
        link.channel.write(q, link.channel.voidPromise());
        stats.sent();
    }

    private Link nextLink() {
        for (int tries = 0; tries < links.size(); tries++) {
            Link l = links.get(nextLink);
            nextLink = nextLink + 1 == links.size() ? 0 : nextLink + 1;
            if (!l.dead) {
                return l;
            }
        }
        return null;
    }

    private void flush() {
        for (Link l : links) {
            l.channel.flush();
        }
    }

    /** Flood: a batch, then yield to reads, then again. */
    private void pump() {
        if (stopping) {
            return;
        }
        for (int i = 0; i < FLOOD_BATCH; i++) {
            send(System.nanoTime());
        }
        flush();
        loop.execute(this::pump);
    }

    /** Open loop: every query whose instant has come, stamped with that instant. */
    private void sendDue() {
        if (stopping) {
            return;
        }
        long now = System.nanoTime();
        long due = (long) ((now - rateStart) / 1e9 * options.rate());
        for (; rateSent < due; rateSent++) {
            send(rateStart + (long) (rateSent * 1e9 / options.rate()));
        }
        flush();
    }

    private void onAnswer(Link link, ByteBuf reply) {
        if (reply.readableBytes() < 12) {
            return;
        }
        int id = reply.getUnsignedShort(reply.readerIndex());
        long at = link.sentAt[id];
        if (at == 0) {
            stats.late++;
            return;
        }
        long latency = System.nanoTime() - at;
        link.sentAt[id] = 0;
        link.inFlight--;
        pending--;
        int rcode = reply.getUnsignedByte(reply.readerIndex() + 3) & 0x0F;
        stats.answered(rcode, latency);
        if (options.verbose()) {
            verboseOut.printf("id=%d rcode=%s latency=%.3fms%n", id,
                    rcode < RunStats.RCODE_NAMES.length ? RunStats.RCODE_NAMES[rcode] : "RCODE" + rcode, latency / 1e6);
        }
        if (closedLoop()) {
            send(System.nanoTime());
        }
    }

    private boolean closedLoop() {
        return !stopping && !options.flood() && options.rate() == 0;
    }

    private void remember(int link, int id, long at) {
        if (ringSize == ringKeys.length) {
            expireHead(Long.MAX_VALUE); // more in flight than the ring holds: the oldest gives up early
        }
        int slot = (ringHead + ringSize) & (ringKeys.length - 1);
        ringKeys[slot] = ((long) link << 16) | id;
        ringTimes[slot] = at;
        ringSize++;
    }

    private void expire() {
        long cutoff = System.nanoTime() - options.timeoutNanos();
        boolean sentAny = false;
        while (ringSize > 0 && ringTimes[ringHead] <= cutoff) {
            sentAny |= expireHead(cutoff);
        }
        if (sentAny) {
            flush();
        }
    }

    /** Drops the oldest entry; if its query is still unanswered, it timed out. */
    private boolean expireHead(long cutoff) {
        long key = ringKeys[ringHead];
        long at = ringTimes[ringHead];
        ringHead = (ringHead + 1) & (ringKeys.length - 1);
        ringSize--;
        Link link = links.get((int) (key >>> 16));
        int id = (int) (key & 0xFFFF);
        if (link.sentAt[id] != at) {
            return false; // answered already
        }
        link.sentAt[id] = 0;
        link.inFlight--;
        pending--;
        stats.timedOut();
        if (closedLoop() && cutoff != Long.MAX_VALUE) {
            send(System.nanoTime());
            return true;
        }
        return false;
    }

    /**
     * Starts counting afresh (after a warm-up). Queries in flight count as sent in the new count,
     * since their answers or timeouts will.
     */
    void forgetSoFar() throws InterruptedException {
        loop.submit(() -> {
            stats = new RunStats();
            stats.sent = pending;
        }).sync();
    }

    /** This generator's counts since the last call, taken on its loop. */
    Future<RunStats.Interval> takeInterval() {
        return loop.submit(stats::takeInterval);
    }

    /** Reads answers off one socket or connection. */
    private final class Replies extends SimpleChannelInboundHandler<Object> {
        private final Link link;

        Replies(Link link) {
            this.link = link;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, Object msg) {
            onAnswer(link, msg instanceof DatagramPacket p ? p.content() : (ByteBuf) msg);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            flush();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            link.dead = true; // its queries time out; the others carry on
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            // ICMP port unreachable on a connected socket and the like: answers just do not come
        }
    }
}
