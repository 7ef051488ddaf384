package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.group.ChannelGroup;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Sets up each client TCP connection: two-byte length framing (RFC 1035 section 4.2.2), several
 * queries per connection answered in any order (RFC 7766), an idle timeout, and a bound on open
 * connections. A half-sent frame only waits in its own connection's buffer until the idle timeout.
 */
final class TcpListener extends ChannelInitializer<Channel> {
    private static final int MAX_MESSAGE_BYTES = 65535;

    private final Map<EventLoop, QueryHandler> handlers;
    private final ChannelGroup open;
    private final AtomicInteger connections = new AtomicInteger();
    private final int maxConnections;
    private final long idleMillis;

    TcpListener(Map<EventLoop, QueryHandler> handlers, ChannelGroup open, int maxConnections, Duration idle) {
        this.handlers = handlers;
        this.open = open;
        this.maxConnections = maxConnections;
        this.idleMillis = idle.toMillis();
    }

    @Override
    protected void initChannel(Channel ch) {
        QueryHandler handler = handlers.get(ch.eventLoop());
        if (connections.incrementAndGet() > maxConnections) {
            connections.decrementAndGet();
            handler.meters().tcpConnectionsRejected.increment();
            ch.close();
            return;
        }
        ch.closeFuture().addListener(f -> connections.decrementAndGet());
        open.add(ch);
        ch.pipeline().addLast(
                new IdleStateHandler(idleMillis, 0, 0, TimeUnit.MILLISECONDS),
                new LengthFieldBasedFrameDecoder(MAX_MESSAGE_BYTES, 0, 2, 0, 2),
                new LengthFieldPrepender(2),
                new Connection(handler));
    }

    private static final class Connection extends SimpleChannelInboundHandler<ByteBuf> {
        private final QueryHandler handler;

        Connection(QueryHandler handler) {
            this.handler = handler;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
            handler.meters().queriesTcp.increment();
            handler.handle(frame, ctx.channel(), null);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            handler.endOfBurst();
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof IdleStateEvent) {
                handler.meters().tcpIdleClosed.increment();
                ctx.close();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            handler.meters().ioErrors.increment(); // reset by peer and the like: close quietly
            ctx.close();
        }
    }
}
