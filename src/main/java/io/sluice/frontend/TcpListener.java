package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelPromise;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.group.ChannelGroup;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.sluice.acl.ClientNetworks;
import io.sluice.forward.TransferPart;
import io.sluice.pipeline.Outcome;
import io.sluice.pipeline.Pipeline;
import io.sluice.transport.TcpFraming;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Sets up each client TCP connection: two-byte length framing (RFC 1035 section 4.2.2), several
 * queries per connection answered in any order (RFC 7766), an idle timeout, and a bound on open
 * connections. A half-sent frame only waits in its own connection's buffer until the idle timeout.
 * A client that half-closes gets what it asked for, then the close; one that sends something
 * that is not a query (no ID, QR=1) is closed at once.
 */
final class TcpListener extends ChannelInitializer<Channel> {
    private final Map<EventLoop, Pipeline> pipelines;
    private final ListenerMeters meters;
    private final ClientNetworks allowed;
    private final ChannelGroup open;
    private final AtomicInteger connections = new AtomicInteger();
    private final int maxConnections;
    private final long idleMillis;

    TcpListener(Map<EventLoop, Pipeline> pipelines, ListenerMeters meters, ClientNetworks allowed, ChannelGroup open,
                int maxConnections, Duration idle) {
        this.pipelines = pipelines;
        this.meters = meters;
        this.allowed = allowed;
        this.open = open;
        this.maxConnections = maxConnections;
        this.idleMillis = idle.toMillis();
    }

    @Override
    protected void initChannel(Channel ch) {
        // A client outside allow-clients gets no connection at all: held open, its connections
        // would take the places of the clients it may not crowd out.
        if (!allowed.allows(((InetSocketAddress) ch.remoteAddress()).getAddress())) {
            meters.aclDenied.increment();
            ch.close();
            return;
        }
        if (connections.incrementAndGet() > maxConnections) {
            connections.decrementAndGet();
            meters.tcpConnectionsRejected.increment();
            ch.close();
            return;
        }
        ch.closeFuture().addListener(f -> connections.decrementAndGet());
        open.add(ch);
        ch.pipeline().addLast(new IdleStateHandler(idleMillis, 0, 0, TimeUnit.MILLISECONDS));
        TcpFraming.addTo(ch.pipeline());
        ch.pipeline().addLast(new Connection(pipelines.get(ch.eventLoop()), meters));
    }

    /**
     * One client connection. It counts the answers it owes, so that a client that sends its
     * queries and then half-closes (shutdown(SHUT_WR), as some tools do) gets them before the
     * close; messages of a zone transfer come as {@link TransferPart}s until its last, so that a
     * transfer is owed as one answer.
     */
    private static final class Connection extends ChannelDuplexHandler {
        private final Pipeline pipeline;
        private final ListenerMeters meters;
        private int owed;
        private boolean inputShut;

        Connection(Pipeline pipeline, ListenerMeters meters) {
            this.pipeline = pipeline;
            this.meters = meters;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf frame = (ByteBuf) msg;
            try {
                if (!ctx.channel().isActive()) {
                    return; // closed for a message before this one of the same read: not served
                }
                meters.queriesTcp.increment();
                switch (pipeline.handle(frame, ctx.channel(), null)) {
                    case ANSWERED, PARKED -> owed++;
                    case NOT_A_QUERY -> ctx.close(); // not a DNS client: nothing to wait for, as nsd resets
                    default -> { } // dropped: nothing owed
                }
            } finally {
                frame.release();
            }
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            if (msg instanceof TransferPart part) {
                ctx.write(part.content(), promise);
                return;
            }
            owed--;
            ctx.write(msg, promise);
            if (inputShut && owed <= 0) {
                closeWhenWritten(ctx);
            }
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

        /**
         * Idle means nothing sent and nothing owed: a client waiting for an answer, or taking a
         * zone transfer, sends nothing meanwhile, and the forwarder's deadlines bound that wait.
         */
        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof IdleStateEvent) {
                if (owed <= 0) {
                    meters.tcpIdleClosed.increment();
                    ctx.close();
                }
            } else if (evt instanceof ChannelInputShutdownEvent) {
                inputShut = true;
                if (owed <= 0) {
                    closeWhenWritten(ctx);
                }
            } else if (evt == Outcome.DROPPED) { // a parked query, dropped after all (Query.droppedAfterParking)
                owed--;
                if (inputShut && owed <= 0) {
                    closeWhenWritten(ctx);
                }
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            meters.ioErrors.increment(); // reset by peer and the like: close quietly
            ctx.close();
        }
    }
}
