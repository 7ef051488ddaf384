package io.sluice.stress;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2WindowUpdateFrame;
import io.netty.handler.codec.http2.Http2ChannelDuplexHandler;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2FrameStream;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.collection.IntObjectHashMap;

/**
 * DNS over HTTPS for the load tool (RFC 8484): each DNS message written becomes a POST to
 * /dns-query on a stream of its own, on one HTTP/2 connection (after Netty's frame codec), and each
 * response's body comes back up as the DNS answer. A response that is not 200 carries no answer:
 * its query times out, and counts as lost. The query keeps its message ID, by which the tool
 * matches answers (RFC 8484 recommends 0 for caching; a load tool wants every answer told apart).
 */
final class DohStreams extends Http2ChannelDuplexHandler {
    private final String authority;
    /** Bodies being read, by stream: a DNS answer may come in several DATA frames. */
    private final IntObjectHashMap<ByteBuf> bodies = new IntObjectHashMap<>();

    DohStreams(String authority) {
        this.authority = authority;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!(msg instanceof ByteBuf query)) {
            ctx.write(msg, promise);
            return;
        }
        Http2FrameStream stream = newStream();
        Http2Headers headers = new DefaultHttp2Headers().method("POST").scheme("https").authority(authority)
                .path("/dns-query")
                .set(HttpHeaderNames.CONTENT_TYPE, "application/dns-message")
                .set(HttpHeaderNames.ACCEPT, "application/dns-message")
                .setInt(HttpHeaderNames.CONTENT_LENGTH, query.readableBytes());
        ctx.write(new DefaultHttp2HeadersFrame(headers, false).stream(stream), ctx.voidPromise());
        ctx.write(new DefaultHttp2DataFrame(query, true).stream(stream), promise);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof Http2HeadersFrame h) {
            boolean ok = "200".contentEquals(h.headers().status() == null ? "" : h.headers().status());
            if (!ok && !h.isEndStream()) {
                bodies.put(h.stream().id(), null); // no answer on this stream: its body is dropped
            } else if (h.isEndStream()) {
                ByteBuf partial = bodies.remove(h.stream().id()); // trailers, or a response without a body
                if (partial != null) {
                    partial.release();
                }
            }
        } else if (msg instanceof Http2DataFrame d) {
            int id = d.stream().id();
            int credit = d.initialFlowControlledBytes();
            boolean refused = bodies.containsKey(id) && bodies.get(id) == null;
            if (!refused) {
                ByteBuf body = bodies.get(id);
                if (body == null) {
                    body = ctx.alloc().buffer(d.content().readableBytes());
                    bodies.put(id, body);
                }
                body.writeBytes(d.content());
            }
            d.release();
            if (credit > 0) { // the frame codec leaves returning the flow-control window to its user
                ctx.write(new DefaultHttp2WindowUpdateFrame(credit).stream(d.stream()), ctx.voidPromise());
            }
            if (d.isEndStream()) {
                ByteBuf body = bodies.remove(id);
                if (body != null) {
                    ctx.fireChannelRead(body);
                }
            }
        } else {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        for (ByteBuf b : bodies.values()) {
            if (b != null) {
                b.release();
            }
        }
        bodies.clear();
        super.channelInactive(ctx);
    }
}
