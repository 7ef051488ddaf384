package io.sluice.doh;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
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
 * The DNS answer comes back through the request's route ({@link ExchangeRoute}), which
 * makes it the response to the request in the query path: {@code 200}, with
 * {@code cache-control: max-age} the answer's smallest TTL.
 */
final class Http1Exchange extends ChannelDuplexHandler {
    /** What the aggregator reads in place of a body too large for a DNS message: answered 400, in its turn. */
    static final Object OVERSIZED = new Object();
    /** Requests read while one is in the query path, and {@link #OVERSIZED}s: answered in order. */
    private final ArrayDeque<Object> waiting = new ArrayDeque<>();
    /** A request is in the query path: its answer comes before any other's. */
    private boolean busy;
    private boolean keepAlive = true;
    /** A bound was reached or the server stops: the answer owed is the last, sent with Connection: close. */
    private boolean windingDown;
    /** The request in the query path is owed an answer: its answer, or its drop, settles it. */
    private boolean owed;
    private ChannelHandlerContext ctx;
    private final DohConnection connection;

    Http1Exchange(DohConnection connection) {
        this.connection = connection;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof FullHttpRequest) && msg != OVERSIZED) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (busy) {
            waiting.add(msg);
            ctx.channel().config().setAutoRead(false);
            return;
        }
        handle(ctx, msg);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    private void handle(ChannelHandlerContext ctx, Object msg) {
        busy = true;
        if (msg == OVERSIZED) { // the connection stays open: the aggregator drops the rest of that body
            refuse(ctx, Refusal.TOO_LARGE);
            return;
        }
        FullHttpRequest request = (FullHttpRequest) msg;
        keepAlive = HttpUtil.isKeepAlive(request) && !windingDown;
        try {
            if (request.decoderResult().isFailure()) {
                keepAlive = false;
                refuse(ctx, new Refusal(HttpResponseStatus.BAD_REQUEST, "not an HTTP request"));
                return;
            }
            ask(ctx, DohRequest.read(request.method().name(), request.uri(),
                    request.headers().get(HttpHeaderNames.CONTENT_TYPE), request.content()));
        } finally {
            request.release();
        }
    }

    /** Runs {@code request}'s message through the query path, or answers its refusal. Releases the message. */
    private void ask(ChannelHandlerContext ctx, DohRequest request) {
        if (request.message() == null) {
            refuse(ctx, request.refusal());
            return;
        }
        try {
            owed = true; // before the ask: the answer may come inside it
            Refusal refusal = connection.ask(request.message(), new ExchangeRoute());
            if (refusal != null) {
                owed = false;
                refuse(ctx, refusal);
            }
        } finally {
            request.message().release();
        }
    }

    /**
     * The route back to one request: the one in the query path while its exchange is unsettled,
     * since one request at a time is. An answer no request waits for (the connection closed, the
     * exchange settled already) is dropped, never written raw on the connection.
     */
    private final class ExchangeRoute extends DohRoute {
        ExchangeRoute() {
            super(connection);
        }

        @Override
        public void send(ByteBuf answer) {
            if (settle() && owed) {
                owed = false;
                respond(ctx, HttpResponseStatus.OK, DohRequest.CONTENT_TYPE, connection.maxAge(answer), answer,
                        ctx.voidPromise());
                connection.needsFlush();
            } else {
                answer.release();
            }
        }

        @Override
        public void dropped(ByteBuf query) {
            if (settle() && owed) {
                owed = false;
                refuse(ctx, Refusal.REFUSED); // flushed at once
            }
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        connection.endOfRead();
        ctx.fireChannelReadComplete();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        connection.meters.ioErrors().increment(); // reset by peer and the like: close quietly
        ctx.close();
    }

    /** Answers {@code refusal} at once, its text the body. */
    private void refuse(ChannelHandlerContext ctx, Refusal refusal) {
        respond(ctx, refusal.status(), Refusal.CONTENT_TYPE, -1, refusal.body(ctx.alloc()), ctx.newPromise());
        ctx.flush();
    }

    /**
     * Writes the response (whose body's reference this takes) with {@code promise}; the caller
     * or the loop's end of wake-up flushes it.
     *
     * @param maxAge the freshness lifetime in seconds for {@code cache-control}, or -1 for none
     */
    private void respond(ChannelHandlerContext ctx, HttpResponseStatus status, CharSequence contentType, long maxAge,
                         ByteBuf body, ChannelPromise promise) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, body);
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        if (maxAge >= 0) {
            response.headers().set(HttpHeaderNames.CACHE_CONTROL, "max-age=" + maxAge);
        }
        if (status == HttpResponseStatus.METHOD_NOT_ALLOWED) {
            response.headers().set(HttpHeaderNames.ALLOW, Refusal.ALLOWED);
        }
        if (!keepAlive) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        ChannelFuture written = ctx.write(response, promise.isVoid() ? ctx.newPromise() : promise);
        if (!keepAlive) {
            written.addListener(ChannelFutureListener.CLOSE);
        }
        busy = false;
        if (!waiting.isEmpty() && ctx.channel().isWritable()) {
            ctx.executor().execute(() -> next(ctx)); // not inside this write: the next may answer at once
        } else {
            readIfRoom(ctx);
        }
    }

    /**
     * Reads on while no request waits and the answers written are leaving: a client that sends
     * requests and never reads its answers fills the connection's write buffer (Netty's high water
     * mark, 64 KiB) and then sends into its own socket, while this connection holds no more.
     */
    private void readIfRoom(ChannelHandlerContext ctx) {
        ctx.channel().config().setAutoRead(keepAlive && !busy && waiting.isEmpty() && ctx.channel().isWritable());
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable() && !busy && !waiting.isEmpty()) {
            next(ctx);
        } else {
            readIfRoom(ctx); // winding down, keepAlive is false: it stays off
        }
        ctx.fireChannelWritabilityChanged();
    }

    /**
     * Takes no request more: the one in the query path is answered with Connection: close, then the
     * connection closes; requests read after it are not answered (the close tells the client to ask
     * them again), as HTTP/1.1 allows. With nothing in the path it closes at once.
     */
    void windDown() {
        windingDown = true;
        keepAlive = false;
        ctx.channel().config().setAutoRead(false);
        releaseWaiting();
        if (!busy) { // an answer just written may wait for the wake-up's flush: flushed first
            ctx.executor().execute(() -> {
                ctx.channel().flush();
                ctx.channel().close();
            });
        }
    }

    private void next(ChannelHandlerContext ctx) {
        Object request = waiting.poll();
        if (request == null) {
            return;
        }
        if (!keepAlive || !ctx.channel().isActive()) {
            ReferenceCountUtil.release(request);
            releaseWaiting();
            return;
        }
        handle(ctx, request);
        if (!busy) {
            readIfRoom(ctx);
        }
        ctx.flush();
    }

    private void releaseWaiting() {
        for (Object r; (r = waiting.poll()) != null; ) {
            ReferenceCountUtil.release(r);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        owed = false; // an answer still in the path finds the channel closed and is dropped
        releaseWaiting();
        ctx.fireChannelInactive();
    }

    /**
     * The body aggregator, which reads a body too large for a DNS message as {@link #OVERSIZED}:
     * 400 (not the aggregator's 413), in the order of the requests. The connection stays open: a
     * close while the client is still sending the body would reset it, the 400 unread.
     */
    static final class Aggregator extends HttpObjectAggregator {
        Aggregator(int maxContentLength) {
            super(maxContentLength);
        }

        /** {@code oversized} is the aggregator's to release (it does, after this). */
        @Override
        protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
            ctx.fireChannelRead(OVERSIZED);
        }
    }
}
