package io.sluice.forward;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.unix.IntegerUnixChannelOption;
import io.sluice.transport.SocketProtocol;
import java.net.InetSocketAddress;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.sluice.transport.TcpFraming;
import io.sluice.transport.UpstreamTls;
import java.util.concurrent.TimeUnit;

/**
 * One TCP connection from one event loop to one upstream, opened on first use and reused; many
 * queries may be in flight on it (RFC 7766 pipelining), told apart by ID. Queries that arrive while
 * it connects wait in the ID table and are written once it is up. To a {@code tls://} upstream the
 * connection is TLS: what is written before the handshake ends waits in the TLS handler, and a
 * connection that never got through its handshake fails its queries' attempts (for a plain one,
 * TCP is the second way to an upstream that UDP still reaches: its failure to connect is not
 * counted against the upstream).
 */
final class TcpUpstreamLink extends UpstreamLink {
    private final Forwarder forwarder;
    private final Bootstrap bootstrap;
    private final boolean overTls;
    private Channel channel;
    private boolean connected;
    /** TLS: the handshake of this connection has ended well. */
    private boolean handshaken;
    /** The connection has answered before: a close then is the upstream tidying up, worth one retry. */
    private boolean answeredOnce;
    /** How long after a read a query written may carry its acknowledgement ({@link #acknowledgeIfNoneWent}). */
    static final long ACK_DELAY_NANOS = TimeUnit.MICROSECONDS.toNanos(500);
    /**
     * TCP_QUICKACK set to 2, not 1: Linux then sends the acknowledgement it was delaying and goes
     * back to delaying the next ones (an even value re-enters delayed-ACK mode once the pending
     * ACK is out), where 1 leaves delayed-ACK mode. Out of it, the kernel
     * acknowledges each answer on its own and the upstream, freed at once, writes each answer in
     * a segment of its own: under load that took the segments a query from 0.86 to 1.4 and the
     * TCP rate below the build without any acknowledgement of sluice's (docs/benchmarks.md, "TCP
     * to the upstream"). Netty's boolean option can only set 1.
     */
    private static final IntegerUnixChannelOption ACK_NOW = new IntegerUnixChannelOption("TCP_QUICKACK_ONCE",
            6 /* IPPROTO_TCP */, 12 /* TCP_QUICKACK */);
    private final Runnable acknowledge = this::acknowledgeIfNoneWent;
    /** A query was written since the last read of answers. */
    private boolean wroteSinceRead;
    /** {@link #acknowledge} is scheduled. */
    private boolean ackDue;

    /** @param tls what the connection is made TLS with, for a {@code tls://} upstream; else null */
    TcpUpstreamLink(Forwarder forwarder, Upstream upstream, Bootstrap template, int connectTimeoutMillis,
                    UpstreamTls tls) {
        super(upstream);
        this.forwarder = forwarder;
        this.overTls = tls != null;
        this.bootstrap = template.clone()
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMillis)
                .option(ChannelOption.TCP_NODELAY, true)
                .handler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        if (tls != null) { // the connect timeout bounds the handshake too
                            ch.pipeline().addLast(tls.handler(ch.alloc(), upstream.tlsName(), upstream.address(),
                                    connectTimeoutMillis));
                            TcpFraming.addOneRecordEachTo(ch.pipeline());
                        } else {
                            TcpFraming.addTo(ch.pipeline());
                        }
                        ch.pipeline().addLast(new Handler());
                    }
                });
    }

    @Override
    void send(PendingQuery q) {
        if (connected) {
            channel.write(q.query.retainedDuplicate(), channel.voidPromise());
            forwarder.writes().needsFlush(channel);
            wroteSinceRead = true;
        } else if (channel == null) {
            connect();
        }
    }

    @Override
    SocketProtocol protocol() {
        return overTls ? SocketProtocol.DOT : SocketProtocol.TCP;
    }

    @Override
    InetSocketAddress localAddress() {
        return channel != null && channel.localAddress() instanceof InetSocketAddress a ? a : null;
    }

    private void connect() {
        ChannelFuture f = bootstrap.connect(upstream().address());
        channel = f.channel();
        f.addListener(done -> {
            if (done.isSuccess()) {
                connected = true;
                forEachWaiting(id -> forwarder.writeWaiting(this, id));
                channel.flush();
            }
            // On failure the channel is closed, and channelInactive hands the waiting queries back.
        });
        channel.closeFuture().addListener(closed -> onClosed());
    }

    private void onClosed() {
        channel = null;
        boolean handshakeFailed = overTls && !handshaken;
        connected = false;
        handshaken = false;
        boolean wasHealthy = answeredOnce;
        answeredOnce = false;
        if (handshakeFailed) {
            forEachWaiting(id -> forwarder.linkUnreachable(this, id));
        } else {
            forEachWaiting(id -> forwarder.linkLost(this, id, wasHealthy));
        }
    }

    void close() {
        if (channel != null) {
            channel.close();
        }
    }

    /**
     * Acknowledges at once what was read since {@link #ACK_DELAY_NANOS} ago, unless a query written
     * since carried the acknowledgement (TCP_NODELAY is set here) or nothing waits for an answer.
     * An upstream that writes each answer without TCP_NODELAY (nsd does) holds its next small
     * answer until the last is acknowledged, and the kernel delays that acknowledgement up to 40
     * ms when it has nothing to send with it: queries pipelined on this one connection then wait in
     * turns of 40 ms. Under load a query follows within the delay and carries the acknowledgement
     * for free, so this is rare there (docs/benchmarks.md, "TCP to the upstream"). NIO has no such
     * option: there it is ignored.
     */
    private void acknowledgeIfNoneWent() {
        ackDue = false;
        if (!wroteSinceRead && channel != null && anyWaiting()) {
            channel.config().setOption(ACK_NOW, 2);
        }
    }

    private final class Handler extends SimpleChannelInboundHandler<ByteBuf> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
            answeredOnce = true;
            forwarder.onReply(TcpUpstreamLink.this, frame);
        }

        /** What was read is acknowledged by a query within {@link #ACK_DELAY_NANOS}, or then by itself. */
        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            wroteSinceRead = false;
            if (!ackDue) {
                ackDue = true;
                ctx.executor().schedule(acknowledge, ACK_DELAY_NANOS, TimeUnit.NANOSECONDS);
            }
            ctx.fireChannelReadComplete();
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
            if (event instanceof SslHandshakeCompletionEvent done) {
                if (done.isSuccess()) {
                    handshaken = true;
                } else {
                    forwarder.meters().tlsFailures[upstream().index()].increment(); // the prober logs why
                }
            }
            ctx.fireUserEventTriggered(event);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            forwarder.meters().ioErrors.increment();
            ctx.close();
        }
    }
}
