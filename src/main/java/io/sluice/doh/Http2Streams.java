package io.sluice.doh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http2.AbstractHttp2ConnectionHandlerBuilder;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2ConnectionDecoder;
import io.netty.handler.codec.http2.Http2ConnectionEncoder;
import io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameAdapter;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2Stream;
import io.netty.util.AsciiString;
import io.netty.util.collection.IntObjectHashMap;

/**
 * DNS over HTTPS on one HTTP/2 connection: each stream one exchange, its request's headers and
 * body gathered until the stream ends, asked, and answered as the response's headers and one
 * DATA frame, in whatever order the query path answers. Frames are handled here, on the
 * connection's channel, with no channel or pipeline per stream, which Netty's multiplexing makes
 * and writes through (docs/benchmarks.md, "DNS over HTTPS").
 *
 * <p>Each query is asked with its own route ({@link StreamRoute}), which knows its stream: the
 * answer goes there whatever its message ID (a DoH client sends ID 0 on every stream, RFC 8484
 * section 4.1). Stream IDs are never reused on a connection, so an answer that comes after its
 * client reset the stream finds it closed and is dropped.
 */
final class Http2Streams extends Http2ConnectionHandler {
    /**
     * Streams a client may have open at once, nginx's and h2o's order: the bound on what a client
     * that asks and never reads (never opens its flow-control window) makes a connection hold, at
     * most this many answers. A TCP connection's backlog bound of a MiB cannot serve here: HTTP/2
     * must read on for the client's WINDOW_UPDATEs, and a client's streams come in one read,
     * before any answer is held.
     */
    static final int MAX_STREAMS = 100;
    /**
     * Queries in the path at once, at most: those of the open streams and of streams the client
     * reset with their query still in the path (until its answer or its query-timeout). Past it, a
     * stream is refused (REFUSED_STREAM, which a client asks again).
     */
    static final int MAX_IN_PATH = 4096;
    private static final AsciiString DNS_MESSAGE = AsciiString.cached(DohRequest.CONTENT_TYPE);

    private final DohConnection connection;
    /** Requests whose body is still coming, by stream. */
    private final IntObjectHashMap<Request> reading = new IntObjectHashMap<>();
    private boolean stopping;
    private boolean closing;
    private ChannelHandlerContext ctx;

    private Http2Streams(Http2ConnectionDecoder decoder, Http2ConnectionEncoder encoder, Http2Settings settings,
                         DohConnection connection) {
        super(decoder, encoder, settings);
        this.connection = connection;
    }

    /** The handler of {@code connection} once its client chose "h2". */
    static Http2Streams on(DohConnection connection) {
        return new Builder(connection).build();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
        this.ctx = ctx;
        super.handlerAdded(ctx);
    }

    /** A request's headers and what came of its body so far. */
    private static final class Request {
        final Http2Headers headers;
        ByteBuf body;
        /** The body grew past a DNS message: the rest is read and dropped, and the request refused. */
        boolean oversized;

        Request(Http2Headers headers) {
            this.headers = headers;
        }

        void release() {
            if (body != null) {
                body.release();
                body = null;
            }
        }
    }

    private final class Frames extends Http2FrameAdapter {
        @Override
        public void onHeadersRead(ChannelHandlerContext ctx, int streamId, Http2Headers headers, int padding,
                                  boolean endOfStream) {
            Request r = reading.get(streamId);
            if (r == null && endOfStream) {
                request(ctx, streamId, headers, Unpooled.EMPTY_BUFFER);
            } else if (r == null) {
                reading.put(streamId, new Request(headers));
            } else if (endOfStream) { // a second HEADERS is the trailers: the request's own headers stay
                reading.remove(streamId);
                request(ctx, streamId, r);
            }
        }

        @Override
        public void onHeadersRead(ChannelHandlerContext ctx, int streamId, Http2Headers headers, int streamDependency,
                                  short weight, boolean exclusive, int padding, boolean endOfStream) {
            onHeadersRead(ctx, streamId, headers, padding, endOfStream);
        }

        @Override
        public int onDataRead(ChannelHandlerContext ctx, int streamId, ByteBuf data, int padding, boolean endOfStream) {
            int consumed = data.readableBytes() + padding; // read at once: the client's window opens again
            Request r = reading.get(streamId);
            if (r == null) {
                return consumed;
            }
            if (!r.oversized) {
                if (r.body == null) {
                    r.body = ctx.alloc().buffer(data.readableBytes());
                }
                if (r.body.readableBytes() + data.readableBytes() > DohRequest.MAX_MESSAGE) {
                    r.oversized = true;
                    r.release();
                } else {
                    r.body.writeBytes(data);
                }
            }
            if (endOfStream) {
                reading.remove(streamId);
                request(ctx, streamId, r);
            }
            return consumed;
        }

        @Override
        public void onRstStreamRead(ChannelHandlerContext ctx, int streamId, long errorCode) {
            Request r = reading.remove(streamId);
            if (r != null) {
                r.release();
            }
        }
    }

    private void request(ChannelHandlerContext ctx, int streamId, Request r) {
        try {
            if (r.oversized) {
                refuse(ctx, streamId, Refusal.TOO_LARGE);
            } else {
                request(ctx, streamId, r.headers, r.body == null ? Unpooled.EMPTY_BUFFER : r.body);
            }
        } finally {
            r.release();
        }
    }

    /** Reads and asks one request; {@code body} stays the caller's. */
    private void request(ChannelHandlerContext ctx, int streamId, Http2Headers headers, ByteBuf body) {
        CharSequence method = headers.method();
        CharSequence path = headers.path();
        DohRequest request = DohRequest.read(method == null ? "" : method.toString(), path == null ? "" : path.toString(),
                headers.get(HttpHeaderNames.CONTENT_TYPE), body);
        if (request.message() == null) {
            refuse(ctx, streamId, request.refusal());
            return;
        }
        ByteBuf message = request.message();
        try {
            if (connection.exchangesOpen() >= MAX_IN_PATH) {
                resetStream(ctx, streamId, Http2Error.REFUSED_STREAM.code(), ctx.newPromise());
                return;
            }
            Refusal refusal = connection.ask(message, new StreamRoute(streamId));
            if (refusal != null) {
                refuse(ctx, streamId, refusal);
                closeIfDone();
            }
        } finally {
            message.release();
        }
    }

    /** The route back to one stream's request: one per request, which the query path keeps while it waits. */
    private final class StreamRoute extends DohRoute {
        private final int streamId;

        StreamRoute(int streamId) {
            super(connection);
            this.streamId = streamId;
        }

        @Override
        public void send(ByteBuf answer) {
            if (settle() && awaiting(streamId)) {
                respond(ctx, streamId, HttpResponseStatus.OK, DNS_MESSAGE, connection.maxAge(answer), answer,
                        ctx.voidPromise());
                connection.needsFlush();
            } else { // settled already, the client reset the stream, or the connection closes
                answer.release();
            }
            closeIfDone();
        }

        @Override
        public void dropped(ByteBuf query) {
            if (settle() && awaiting(streamId)) {
                refuse(ctx, streamId, Refusal.REFUSED);
                connection.needsFlush();
            }
            closeIfDone();
        }
    }

    /**
     * Whether {@code streamId} still awaits its response: not when the client reset it, or the
     * connection closes. OPEN too: an answer made at once, inside the frame that ends the request,
     * comes before the codec half-closes the stream.
     */
    private boolean awaiting(int streamId) {
        Http2Stream stream = connection().stream(streamId);
        return stream != null && stream.state().localSideOpen();
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        connection.endOfRead();
        super.channelReadComplete(ctx); // flushes what was answered at once
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        reading.forEach((id, r) -> r.release());
        reading.clear();
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
        if (Http2CodecUtil.getEmbeddedHttp2Exception(cause) != null) {
            super.exceptionCaught(ctx, cause); // a protocol error: RST_STREAM, or GOAWAY and the close
        } else {
            connection.meters.ioErrors().increment(); // reset by peer and the like: close quietly
            ctx.close();
        }
    }

    /**
     * GOAWAY at once, before the answers still owed: a client that has it opens no stream more
     * here and asks its next query on a new connection; a stream it opened meanwhile is past the
     * GOAWAY's last stream, which tells it that the stream was not taken (RFC 9113 section 6.8).
     * The connection closes once every query taken is answered.
     */
    void windDown() {
        stopping = true;
        goAway(ctx, connection().remote().lastStreamCreated(), Http2Error.NO_ERROR.code(), Unpooled.EMPTY_BUFFER,
                ctx.newPromise());
        ctx.flush();
        closeIfDone();
    }

    private void closeIfDone() {
        if (stopping && !closing && connection.exchangesOpen() <= 0) {
            closing = true;
            // after the answers written in this wake-up are flushed (the loop's tasks run after it)
            ctx.channel().eventLoop().execute(() -> {
                ctx.channel().flush();
                ctx.channel().close();
            });
        }
    }

    private void refuse(ChannelHandlerContext ctx, int streamId, Refusal refusal) {
        respond(ctx, streamId, refusal.status(), Refusal.CONTENT_TYPE, -1, refusal.body(ctx.alloc()), ctx.newPromise());
    }

    /**
     * Writes the response, whose body's reference this takes; the loop's end of wake-up, or of the
     * read, flushes it.
     *
     * @param maxAge the freshness lifetime in seconds for {@code cache-control}, or -1 for none
     */
    private void respond(ChannelHandlerContext ctx, int streamId, HttpResponseStatus status, AsciiString contentType,
                         long maxAge, ByteBuf body, ChannelPromise promise) {
        Http2Headers h = new DefaultHttp2Headers(false, 4).status(status.codeAsText())
                .set(HttpHeaderNames.CONTENT_TYPE, contentType)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        if (maxAge >= 0) {
            h.set(HttpHeaderNames.CACHE_CONTROL, "max-age=" + maxAge);
        }
        if (status == HttpResponseStatus.METHOD_NOT_ALLOWED) {
            h.set(HttpHeaderNames.ALLOW, Refusal.ALLOWED);
        }
        encoder().writeHeaders(ctx, streamId, h, 0, false, ctx.voidPromise());
        encoder().writeData(ctx, streamId, body, 0, true, promise);
    }

    private static final class Builder extends AbstractHttp2ConnectionHandlerBuilder<Http2Streams, Builder> {
        private final DohConnection connection;

        Builder(DohConnection connection) {
            this.connection = connection;
            server(true);
            initialSettings(Http2Settings.defaultSettings().maxConcurrentStreams(MAX_STREAMS));
        }

        @Override
        protected Http2Streams build() {
            return super.build();
        }

        @Override
        protected Http2Streams build(Http2ConnectionDecoder decoder, Http2ConnectionEncoder encoder,
                                     Http2Settings settings) {
            Http2Streams h = new Http2Streams(decoder, encoder, settings, connection);
            frameListener(h.new Frames());
            return h;
        }
    }
}
