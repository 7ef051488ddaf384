package io.sluice.doh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.util.ReferenceCountUtil;

/**
 * DNS over HTTPS on one HTTP/2 stream (a child channel of the connection, on its loop): the
 * request's headers and body are gathered until the stream's end, asked, and the answer written
 * as the response's headers and one data frame. Streams are answered in any order, as the
 * pipeline answers them.
 */
final class Http2Exchange extends DohExchange {
    private Http2Headers headers;
    private ByteBuf body;
    /** The body grew past a DNS message: the rest is read and dropped, and the stream refused. */
    private boolean oversized;

    Http2Exchange(DohConnection connection) {
        super(connection);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        boolean end;
        if (msg instanceof Http2HeadersFrame h) {
            if (headers == null) { // a second HEADERS is the trailers: the request's own headers stay
                headers = h.headers();
            }
            end = h.isEndStream();
        } else if (msg instanceof Http2DataFrame d) {
            end = d.isEndStream();
            if (!oversized) {
                if (body == null) {
                    body = ctx.alloc().buffer(d.content().readableBytes());
                }
                if (body.readableBytes() + d.content().readableBytes() > DohRequest.MAX_MESSAGE) {
                    oversized = true;
                } else {
                    body.writeBytes(d.content());
                }
            }
            d.release();
        } else {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (end && headers != null) {
            request(ctx);
        }
    }

    private void request(ChannelHandlerContext ctx) {
        try {
            if (oversized) {
                refuse(ctx, HttpResponseStatus.BAD_REQUEST, "a DNS message is at most 65535 bytes");
                return;
            }
            CharSequence method = headers.method();
            ask(ctx, DohRequest.read(method == null ? "" : method.toString(),
                    headers.path() == null ? "" : headers.path().toString(),
                    headers.get(HttpHeaderNames.CONTENT_TYPE), body == null ? Unpooled.EMPTY_BUFFER : body));
        } finally {
            if (body != null) {
                body.release();
                body = null;
            }
        }
    }

    /** A stream reset, or its connection closed, before its body ended: what was read of it goes. */
    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (body != null) {
            body.release();
            body = null;
        }
    }

    @Override
    void respond(ChannelHandlerContext ctx, HttpResponseStatus status, String contentType, long maxAge, ByteBuf body,
                 ChannelPromise promise) {
        Http2Headers h = new DefaultHttp2Headers().status(status.codeAsText())
                .set(HttpHeaderNames.CONTENT_TYPE, contentType)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        if (maxAge >= 0) {
            h.set(HttpHeaderNames.CACHE_CONTROL, "max-age=" + maxAge);
        }
        if (status == HttpResponseStatus.METHOD_NOT_ALLOWED) {
            h.set(HttpHeaderNames.ALLOW, "GET, POST");
        }
        ctx.write(new DefaultHttp2HeadersFrame(h, false), ctx.voidPromise());
        ctx.write(new DefaultHttp2DataFrame(body, true), promise);
    }
}
