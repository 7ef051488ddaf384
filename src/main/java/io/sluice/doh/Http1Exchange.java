package io.sluice.doh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;

/**
 * DNS over HTTPS on an HTTP/1.1 connection: one request answered at a time, in order, as HTTP/1.1
 * requires of pipelined requests; those read meanwhile wait, and the connection is not read while
 * any does. A request that asks to close ({@code Connection: close}) is answered, then closed.
 */
final class Http1Exchange extends DohExchange {
    private final ArrayDeque<FullHttpRequest> waiting = new ArrayDeque<>();
    /** A request is in the query path: its answer comes before any other's. */
    private boolean busy;
    private boolean keepAlive = true;

    Http1Exchange(DohConnection connection) {
        super(connection);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof FullHttpRequest request)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (busy) {
            waiting.add(request);
            ctx.channel().config().setAutoRead(false);
            return;
        }
        handle(ctx, request);
    }

    private void handle(ChannelHandlerContext ctx, FullHttpRequest request) {
        busy = true;
        keepAlive = HttpUtil.isKeepAlive(request);
        try {
            if (request.decoderResult().isFailure()) {
                keepAlive = false;
                refuse(ctx, HttpResponseStatus.BAD_REQUEST, "not an HTTP request");
                return;
            }
            ask(ctx, DohRequest.read(request.method().name(), request.uri(),
                    request.headers().get(HttpHeaderNames.CONTENT_TYPE), request.content()));
        } finally {
            request.release();
        }
    }

    @Override
    void respond(ChannelHandlerContext ctx, HttpResponseStatus status, String contentType, long maxAge, ByteBuf body,
                 ChannelPromise promise) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, body);
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        if (maxAge >= 0) {
            response.headers().set(HttpHeaderNames.CACHE_CONTROL, "max-age=" + maxAge);
        }
        if (status == HttpResponseStatus.METHOD_NOT_ALLOWED) {
            response.headers().set(HttpHeaderNames.ALLOW, "GET, POST");
        }
        if (!keepAlive) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        ChannelFuture written = ctx.write(response, promise.isVoid() ? ctx.newPromise() : promise);
        if (!keepAlive) {
            written.addListener(ChannelFutureListener.CLOSE);
        }
        busy = false;
        if (!waiting.isEmpty()) {
            ctx.executor().execute(() -> next(ctx)); // not inside this write: the next may answer at once
        }
    }

    private void next(ChannelHandlerContext ctx) {
        FullHttpRequest request = waiting.poll();
        if (request == null) {
            return;
        }
        if (!keepAlive || !ctx.channel().isActive()) {
            request.release();
            releaseWaiting();
            return;
        }
        handle(ctx, request);
        if (waiting.isEmpty() && !busy) {
            ctx.channel().config().setAutoRead(true);
        }
        ctx.flush();
    }

    private void releaseWaiting() {
        for (FullHttpRequest r; (r = waiting.poll()) != null; ) {
            r.release();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        releaseWaiting();
        ctx.fireChannelInactive();
    }

    /**
     * The body aggregator, answering a body too large for a DNS message with 400 (not the
     * aggregator's 413). The connection stays open: the aggregator drops the rest of that body, and
     * a close while the client is still sending it would reset the connection, the 400 unread.
     */
    static final class Aggregator extends HttpObjectAggregator {
        Aggregator(int maxContentLength) {
            super(maxContentLength);
        }

        @Override
        protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
            ReferenceCountUtil.release(oversized);
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.BAD_REQUEST,
                    ByteBufUtil.writeUtf8(ctx.alloc(), "a DNS message is at most 65535 bytes\n"));
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
            ctx.writeAndFlush(response);
        }
    }
}
