package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.acl.ClientRules;
import io.sluice.config.Settings;
import io.sluice.doh.DohConnection;
import io.sluice.forward.TransferPart;
import io.sluice.limit.Clock;
import io.sluice.pipeline.Pipeline;
import io.sluice.transport.ConnectionBounds;
import io.sluice.transport.ProxyHeader;
import io.sluice.transport.SocketProtocol;
import io.sluice.transport.TcpFraming;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Sets up each client TCP connection: two-byte length framing (RFC 1035 section 4.2.2), several
 * queries per connection answered in any order (RFC 7766), and the bounds that keep TCP from
 * being held hostage: connections at once (in all, and from one client), an idle timeout that
 * only a whole query resets (a frame trickled in a byte at a time does not), queries per
 * connection and connection time. A client that half-closes gets what it asked for, then the
 * close; one that sends something that is not a query (no ID, QR=1) is closed at once. A client
 * that does not read its answers stops being read: see {@link Connection}.
 *
 * <p>A connection from a {@code proxy-protocol-from} source starts with a PROXY header, and its
 * queries are the client's it names ({@link ProxyHeaderReader}). Such a proxy carries many clients:
 * its connections are not held to allow-clients at accept (each query is, as the named client's)
 * nor counted against {@code max-tcp-connections-per-client}; {@code max-tcp-connections} bounds them.
 */
final class TcpListener extends ChannelInitializer<Channel> {
    private final Map<EventLoop, Pipeline> pipelines;
    private final ListenerMeters meters;
    private final ClientRules allowed;
    private final ChannelGroup open;
    private final AtomicInteger connections = new AtomicInteger();
    /**
     * Open connections by client ({@link #clientOf}); a client leaves the map with its last
     * connection.
     */
    private final ConcurrentHashMap<InetAddress, Integer> perClient = new ConcurrentHashMap<>();
    private final int maxConnections;
    private final int maxPerClient;
    private final ConnectionBounds bounds;
    private final ConnectionRate rate;
    private final DohConnection.Meters dohMeters;
    /** {@link #stop} has begun: a connection set up from now on is told at once. */
    private volatile boolean stopping;

    TcpListener(Map<EventLoop, Pipeline> pipelines, ListenerMeters meters, ClientRules allowed, ChannelGroup open,
                Settings settings, Clock clock) {
        this.rate = new ConnectionRate(settings.tcpConnectionRatePerClient(), clock);
        this.pipelines = pipelines;
        this.meters = meters;
        this.allowed = allowed;
        this.open = open;
        this.maxConnections = settings.maxTcpConnections();
        this.maxPerClient = settings.tcpPerClient();
        this.bounds = new ConnectionBounds(settings.tcpIdleTimeout().toNanos(), settings.tcpQueriesPerConnection(),
                settings.tcpMaxDuration().toNanos());
        this.dohMeters = new DohConnection.Meters(meters.queriesHttps, meters.tlsHandshakeFailed, meters.tcpIdleClosed,
                meters.ioErrors);
    }

    @Override
    protected void initChannel(Channel ch) {
        setUp(ch, null);
    }

    /** Sets up a client connection, in TLS with {@code tls} (DNS over TLS) unless it is null. */
    void setUp(Channel ch, SslContext tls) {
        if (!admit(ch)) {
            return;
        }
        if (tls != null) {
            ch.pipeline().addLast(tls.newHandler(ch.alloc()));
        }
        TcpFraming.addTo(ch.pipeline());
        ch.pipeline().addLast(new Connection(pipelines.get(ch.eventLoop()), meters,
                tls == null ? meters.queriesTcp : meters.queriesTls, bounds,
                tls == null ? SocketProtocol.TCP : SocketProtocol.DOT));
        tellIfStopping(ch);
    }

    /** Sets up a DNS over HTTPS connection, in TLS with {@code tls}: the same bounds, then HTTP/2 or HTTP/1.1. */
    void setUpHttps(Channel ch, SslContext tls) {
        if (!admit(ch)) {
            return;
        }
        ch.pipeline().addLast(tls.newHandler(ch.alloc()));
        DohConnection doh = DohConnection.addTo(ch, pipelines.get(ch.eventLoop()), dohMeters, bounds, PROXIED);
        ch.pipeline().addFirst(new ChannelInboundHandlerAdapter() {
            @Override
            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                if (evt == STOP_READING) {
                    doh.stop();
                } else {
                    ctx.fireUserEventTriggered(evt);
                }
            }
        });
        tellIfStopping(ch);
    }

    /**
     * Holds a new connection to the rules and bounds every TCP listener shares (allow-clients, the
     * connection rate and the connections in all and per client), and reads a proxy's PROXY
     * header; false when it was closed for one of them.
     */
    private boolean admit(Channel ch) {
        InetAddress client = ((InetSocketAddress) ch.remoteAddress()).getAddress();
        ClientRules.Rules rules = allowed.now(); // one read: the rules of before or after a reload, not a mix
        boolean proxy = rules.speaksForClients(client);
        // A client outside allow-clients gets no connection at all: held open, its connections
        // would take the places of the clients it may not crowd out.
        if (!proxy && !rules.allows(client)) {
            meters.aclDenied.increment();
            ch.close();
            return false;
        }
        InetAddress counted = proxy ? null : clientOf(client);
        if (counted != null && !rate.admit(counted)) {
            meters.tcpRateRejected.increment();
            ch.close();
            return false;
        }
        if (connections.incrementAndGet() > maxConnections) {
            connections.decrementAndGet();
            meters.tcpConnectionsRejected.increment();
            ch.close();
            return false;
        }
        if (counted != null) {
            int[] fromClient = new int[1];
            perClient.compute(counted, (a, n) -> fromClient[0] = n == null ? 1 : n + 1);
            if (fromClient[0] > maxPerClient) {
                leave(counted);
                connections.decrementAndGet();
                meters.tcpClientLimitRejected.increment();
                ch.close();
                return false;
            }
        }
        ch.closeFuture().addListener(f -> {
            if (counted != null) {
                leave(counted);
            }
            connections.decrementAndGet();
        });
        open.add(ch);
        if (proxy) {
            ch.pipeline().addLast(new ProxyHeaderReader(meters)); // a proxy's header comes before TLS
        }
        return true;
    }

    /**
     * After the add to the group: a stop either finds this connection there or has set the flag
     * before this reads it. A connection accepted just before the stop is set up after it.
     */
    private void tellIfStopping(Channel ch) {
        if (stopping) {
            ch.pipeline().fireUserEventTriggered(STOP_READING);
        }
    }

    /**
     * Tells every connection, and any set up from now on, to take no query more, answer those it
     * has read and close ({@link #STOP_READING}); each is told on its own loop.
     */
    void stop() {
        stopping = true;
        for (Channel ch : open) {
            ch.pipeline().fireUserEventTriggered(STOP_READING);
        }
    }

    /**
     * Whom {@code max-tcp-connections-per-client} counts a connection against: an IPv4 address,
     * or an IPv6 address's /64, which one host is commonly given whole, so that its 2^64
     * addresses are one client.
     */
    static InetAddress clientOf(InetAddress address) {
        if (!(address instanceof Inet6Address)) {
            return address;
        }
        byte[] network = Arrays.copyOf(address.getAddress(), 16);
        Arrays.fill(network, 8, 16, (byte) 0);
        try {
            return InetAddress.getByAddress(network);
        } catch (UnknownHostException e) {
            throw new AssertionError(e); // sixteen octets are always an address
        }
    }

    /**
     * Fired at a connection when the listeners shut down: it takes no query more, answers those it
     * has read (waiting ones too), then closes.
     */
    private static final Object STOP_READING = new Object();

    private void leave(InetAddress client) {
        perClient.computeIfPresent(client, (a, n) -> n <= 1 ? null : n - 1);
    }

    /** The client a connection's PROXY header named; unset (null) when the peer is the client. */
    private static final AttributeKey<InetSocketAddress> PROXIED = AttributeKey.valueOf(TcpListener.class, "proxied");

    /**
     * Reads a proxy's connection's PROXY header, before any framing: notes the client it names
     * and hands the bytes after it on, or closes a connection that does not start with one. Until
     * the header is whole, the connection's idle timeout runs: a proxy that never completes it is
     * closed as idle.
     */
    private static final class ProxyHeaderReader extends ByteToMessageDecoder {
        private final ListenerMeters meters;

        ProxyHeaderReader(ListenerMeters meters) {
            this.meters = meters;
        }

        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
            int header = ProxyHeader.length(in);
            if (header == ProxyHeader.INCOMPLETE) {
                return;
            }
            if (header == ProxyHeader.INVALID) {
                meters.proxyHeaderInvalid.increment();
                in.skipBytes(in.readableBytes());
                ctx.close();
                return;
            }
            ctx.channel().attr(PROXIED).set(ProxyHeader.source(in));
            in.skipBytes(header);
            ctx.pipeline().remove(this); // what follows the header goes on to the framing
        }
    }

    /**
     * One client connection. It counts the answers it owes, so that a client that sends its
     * queries and then half-closes (shutdown(SHUT_WR), as some tools do) gets them before the
     * close; messages of a zone transfer come as {@link TransferPart}s until its last, so that a
     * transfer is owed as one answer.
     *
     * <p>What a connection holds is bounded whatever its client does. A query is handled only
     * while the connection owes fewer than {@value #MAX_OWED} answers and has at most
     * {@value #MAX_BACKLOG_BYTES} bytes waiting to be written; a query read past that waits, as
     * its bytes, with the rest of its read, and nothing more is read, until the client has read
     * enough. So a client that asks and never reads holds a read of queries and about a MiB of
     * answers, and once nothing is owed the idle timeout closes it. A read holds many small
     * queries, each of which may have a large answer: hence the bytes, not only the count.
     */
    private static final class Connection extends ChannelDuplexHandler {
        static final int MAX_OWED = 1000;
        static final long MAX_BACKLOG_BYTES = 1 << 20;
        /**
         * How long a close waits for the loop's next reads ({@link #closeIfDone}): a task scheduled
         * past this turn of the loop runs only after its next I/O.
         */
        static final long CLOSE_AFTER_READS_MILLIS = 1;

        private final Pipeline pipeline;
        private final ListenerMeters meters;
        /** Where its queries are counted: over TCP or over TLS. */
        private final LongAdder queriesCounter;
        private final ConnectionBounds bounds;
        private final SocketProtocol protocol;
        /** Made at the first query, once a proxy's PROXY header has named the client. */
        private ConnectionRoute route;
        private int owed;
        /** A bound (queries, duration) was reached: no query is handled any more. */
        private boolean boundReached;
        /** The client half-closed: what it sent is answered, then the connection closed. */
        private boolean inputShutdown;
        /** Queries read while there was no room to answer them, in order. */
        private final ArrayDeque<ByteBuf> waiting = new ArrayDeque<>();
        private boolean drainQueued;
        /** The listener is shutting down ({@link #STOP_READING}): no query more is taken. */
        private boolean stopped;
        /** The close is under way: asked for once. */
        private boolean closing;
        /** What {@link #readIfRoom} last set the channel's auto-read to. */
        private boolean reading = true;
        private int queries;
        private long openedNanos;
        /** The last whole query read or answer written: what the idle timeout counts from. */
        private long lastActivityNanos;
        private ScheduledFuture<?> check;

        Connection(Pipeline pipeline, ListenerMeters meters, LongAdder queriesCounter, ConnectionBounds bounds,
                   SocketProtocol protocol) {
            this.pipeline = pipeline;
            this.protocol = protocol;
            this.meters = meters;
            this.queriesCounter = queriesCounter;
            this.bounds = bounds;
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            openedNanos = System.nanoTime();
            lastActivityNanos = openedNanos;
            long every = bounds.checkNanos();
            check = ctx.executor().scheduleAtFixedRate(() -> checkBounds(ctx), every, every, TimeUnit.NANOSECONDS);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            check.cancel(false);
            releaseWaiting();
            ctx.fireChannelInactive();
        }

        private void releaseWaiting() {
            for (ByteBuf b; (b = waiting.poll()) != null; ) {
                b.release();
            }
        }

        /**
         * Idle means no whole query and nothing owed for the idle timeout: a client waiting for an
         * answer, or taking a zone transfer, sends nothing meanwhile, and the forwarder's deadlines
         * bound that wait; a client trickling a frame a byte at a time never completes one, and
         * one that does not read its answers is written nothing more.
         */
        private void checkBounds(ChannelHandlerContext ctx) {
            long now = System.nanoTime();
            if (owed <= 0 && now - lastActivityNanos >= bounds.idleNanos()) {
                meters.tcpIdleClosed.increment();
                ctx.close();
            } else if (now - openedNanos >= bounds.maxDurationNanos()) {
                reachBound(ctx);
            }
        }

        /** Handles no query more, not even one waiting; closes once every answer owed is written. */
        private void reachBound(ChannelHandlerContext ctx) {
            boundReached = true;
            releaseWaiting();
            readIfRoom(ctx);
            closeIfDone(ctx);
        }

        private void closeIfDone(ChannelHandlerContext ctx) {
            if ((boundReached || inputShutdown || stopped) && owed <= 0 && waiting.isEmpty() && !closing) {
                closing = true;
                // After the loop's next reads, not now: a stop turns reading back on to discard what
                // the client sent, and that read happens in the loop's I/O, after this task. Closed
                // before it, with the client's bytes unread, the connection is reset, and the reset
                // discards the answers still in the kernel's send buffer: the client got none.
                ctx.executor().schedule(() -> closeWhenWritten(ctx), CLOSE_AFTER_READS_MILLIS, TimeUnit.MILLISECONDS);
            }
        }

        /** Whether a query may be handled now: few enough answers owed, and not too many bytes of them waiting. */
        private boolean roomToAnswer(ChannelHandlerContext ctx) {
            return owed < MAX_OWED && ctx.channel().bytesBeforeWritable() <= MAX_BACKLOG_BYTES;
        }

        /**
         * Reads while it takes queries, none waits, fewer than {@link #MAX_OWED} are owed, and writes
         * do not back up. Once stopped it reads again, to discard: a close with the client's bytes
         * unread is sent as RST, and a RST discards the answers still in the kernel's send buffer.
         */
        private void readIfRoom(ChannelHandlerContext ctx) {
            boolean read = !inputShutdown && (stopped || (!boundReached && waiting.isEmpty() && owed < MAX_OWED
                    && ctx.channel().isWritable()));
            if (read != reading) {
                reading = read;
                ctx.channel().config().setAutoRead(read);
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf frame = (ByteBuf) msg;
            if (!ctx.channel().isActive() || boundReached || stopped) {
                frame.release(); // closed, a bound reached by a message before this one of the same read, or stopping
                return;
            }
            if (!waiting.isEmpty() || !roomToAnswer(ctx)) {
                waiting.add(frame); // nothing more is read (readIfRoom): at most the rest of this read waits
            } else {
                try {
                    handle(ctx, frame);
                } finally {
                    frame.release();
                }
            }
            readIfRoom(ctx);
        }

        private void handle(ChannelHandlerContext ctx, ByteBuf frame) {
            queriesCounter.increment();
            lastActivityNanos = System.nanoTime();
            owed++; // before: an answer written at once, inside handle, is counted off against it
            if (route == null) {
                route = new ConnectionRoute(ctx.channel(), protocol, ctx.channel().attr(PROXIED).get(), pipeline.writes());
            }
            switch (pipeline.handle(frame, route)) {
                case ANSWERED, PARKED -> { }
                case NOT_A_QUERY -> {
                    owed--;
                    ctx.close(); // not a DNS client: nothing to wait for, as nsd resets
                }
                default -> owed--; // dropped: nothing owed
            }
            if (bounds.maxQueries() > 0 && ++queries >= bounds.maxQueries()) {
                reachBound(ctx);
            }
        }

        /**
         * Handles the queries that waited, as room allows, from a task of its own: the room comes
         * back inside a write, which a handled query may itself be making.
         */
        private void drainLater(ChannelHandlerContext ctx) {
            if (!waiting.isEmpty() && !drainQueued) {
                drainQueued = true;
                ctx.executor().execute(() -> drain(ctx));
            }
        }

        private void drain(ChannelHandlerContext ctx) {
            drainQueued = false;
            try {
                boolean handled = false;
                while (!waiting.isEmpty() && ctx.channel().isActive() && !boundReached && roomToAnswer(ctx)) {
                    ByteBuf frame = waiting.poll();
                    try {
                        handle(ctx, frame);
                        handled = true;
                    } finally {
                        frame.release();
                    }
                }
                if (handled) {
                    pipeline.endOfBurst();
                }
                readIfRoom(ctx);
                closeIfDone(ctx);
            } catch (RuntimeException e) {
                exceptionCaught(ctx, e); // a task of its own: nothing else would see it
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            drainLater(ctx);
            readIfRoom(ctx);
            ctx.fireChannelWritabilityChanged();
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            if (msg instanceof TransferPart part) {
                ctx.write(part.content(), promise);
                return;
            }
            owed--;
            lastActivityNanos = System.nanoTime();
            ctx.write(msg, promise);
            answeredOne(ctx);
        }

        /** One answer fewer owed: the close, if winding down, or room for what waits. */
        private void answeredOne(ChannelHandlerContext ctx) {
            closeIfDone(ctx);
            drainLater(ctx);
            readIfRoom(ctx);
        }

        /**
         * Closes once everything written so far has reached the socket: a close at once would
         * discard answers not yet flushed (they are flushed at the end of the loop's wake-up). The
         * empty buffer goes in below the length prepender, so that no empty frame is sent.
         */
        private static void closeWhenWritten(ChannelHandlerContext ctx) {
            ctx.pipeline().firstContext().writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            pipeline.endOfBurst();
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt == STOP_READING) {
                stopped = true;
                readIfRoom(ctx);
                closeIfDone(ctx);
            } else if (evt instanceof ChannelInputShutdownEvent) {
                inputShutdown = true;
                readIfRoom(ctx);
                closeIfDone(ctx);
            } else if (evt instanceof SslHandshakeCompletionEvent h && !h.isSuccess()) {
                meters.tlsHandshakeFailed.increment(); // the SslHandler closes the connection
            } else if (evt == ConnectionRoute.QUERY_DROPPED) { // a parked query, dropped after all
                owed--;
                answeredOne(ctx);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            meters.ioErrors.increment(); // reset by peer and the like: close quietly
            ctx.close();
        }
    }
}
