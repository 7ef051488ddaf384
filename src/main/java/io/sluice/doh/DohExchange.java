package io.sluice.doh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.util.AttributeKey;
import io.sluice.pipeline.Outcome;
import io.sluice.pipeline.Pipeline;
import io.sluice.wire.QueryView;
import io.sluice.wire.ReplyRecords;
import io.sluice.wire.Wire;
import java.net.InetAddress;

/**
 * One HTTP exchange's way through the query path, whatever the HTTP version: the request's DNS
 * message goes to the loop's {@link Pipeline} as a TCP client's would (no truncation, the cache's
 * TCP answers, every limit), with this handler's channel as the client; the DNS answer the
 * pipeline writes to that channel comes back through {@link #write} and leaves as the HTTP
 * response, {@code 200} with {@code cache-control: max-age} set to the answer's smallest TTL (RFC
 * 8484 section 5.1). A query the pipeline drops (acl-action or action drop) gets {@code 403}: an
 * HTTP client must be answered, and a DNS answer would say more than the operator chose to.
 */
abstract class DohExchange extends ChannelDuplexHandler {
    private final Pipeline pipeline;
    private final DohConnection.Meters meters;
    private final AttributeKey<InetAddress> proxiedKey;
    private final QueryView view;
    private final ReplyRecords records;
    /** The connection's count of exchanges waiting for an answer. */
    final DohConnection connection;
    /** A query of this exchange is in the query path: its answer (or its drop, or the close) settles it. */
    private boolean owed;

    DohExchange(DohConnection connection) {
        this.connection = connection;
        this.pipeline = connection.pipeline;
        this.meters = connection.meters;
        this.proxiedKey = connection.proxiedKey;
        this.view = connection.view;
        this.records = connection.records;
    }

    /** Runs {@code request}'s message through the query path, or answers its error. Releases the message. */
    final void ask(ChannelHandlerContext ctx, DohRequest request) {
        if (request.message() == null) {
            refuse(ctx, request.status(), request.error());
            return;
        }
        ByteBuf message = request.message();
        try {
            if (connection.refusesStreams()) {
                ctx.writeAndFlush(new DefaultHttp2ResetFrame(Http2Error.REFUSED_STREAM));
                return;
            }
            if (view.read(message) == QueryView.Check.QUERY && view.hasQuestion()
                    && (view.qtype() == Wire.TYPE_AXFR || view.qtype() == Wire.TYPE_IXFR)) {
                refuse(ctx, HttpResponseStatus.BAD_REQUEST, "zone transfers are not served over HTTPS");
                return;
            }
            meters.queries().increment();
            owed = true;
            connection.outstanding++;
            Outcome outcome = pipeline.handleTcp(message, ctx.channel(), proxied(ctx.channel()));
            switch (outcome) {
                case ANSWERED, PARKED -> { }
                case NOT_A_QUERY -> {
                    settle();
                    refuse(ctx, HttpResponseStatus.BAD_REQUEST, "not a DNS query");
                }
                default -> {
                    settle();
                    refuse(ctx, HttpResponseStatus.FORBIDDEN, "refused");
                }
            }
            connection.counted();
        } finally {
            message.release();
        }
    }

    private InetAddress proxied(Channel ch) {
        Channel connectionChannel = ch.parent() != null ? ch.parent() : ch;
        return connectionChannel.attr(proxiedKey).get();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!(msg instanceof ByteBuf answer)) {
            ctx.write(msg, promise);
            return;
        }
        settle();
        respond(ctx, HttpResponseStatus.OK, DohRequest.CONTENT_TYPE, maxAge(answer), answer, promise);
    }

    /** This exchange's query is answered, dropped or gone with its stream: one owed fewer. */
    private void settle() {
        if (owed) {
            owed = false;
            connection.answered();
        }
    }

    /**
     * An HTTP/2 stream reset by its client, or a connection closed, with a query still in the path:
     * its answer will find the channel closed and be dropped, so it is settled here.
     */
    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        settle();
        super.channelInactive(ctx);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt == Outcome.DROPPED) { // a parked query, dropped after all
            settle();
            refuse(ctx, HttpResponseStatus.FORBIDDEN, "refused");
        } else {
            ctx.fireUserEventTriggered(evt);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        pipeline.endOfBurst();
        ctx.fireChannelReadComplete();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        meters.ioErrors().increment(); // reset by peer, a protocol error: close quietly
        ctx.close();
    }

    /** Answers an error at once: {@code status} with {@code error} as a line of text. */
    final void refuse(ChannelHandlerContext ctx, HttpResponseStatus status, String error) {
        respond(ctx, status, "text/plain; charset=utf-8", -1,
                ByteBufUtil.writeUtf8(ctx.alloc(), error + "\n"), ctx.newPromise());
        ctx.flush();
    }

    /**
     * Writes the response (whose body's reference this takes) with {@code promise}; the caller
     * or the loop's end of wake-up flushes it.
     *
     * @param maxAge the freshness lifetime in seconds for {@code cache-control}, or -1 for none
     */
    abstract void respond(ChannelHandlerContext ctx, HttpResponseStatus status, String contentType, long maxAge,
                          ByteBuf body, ChannelPromise promise);

    /**
     * The answer's freshness lifetime: its smallest TTL; for a negative answer (NXDOMAIN, NODATA)
     * the SOA's negative TTL if smaller (RFC 2308 section 5); 0 for an answer without records.
     */
    final long maxAge(ByteBuf answer) {
        if (!records.read(answer)) {
            return 0;
        }
        long min = records.minTtl() == Long.MAX_VALUE ? 0 : records.minTtl();
        int rcode = answer.getUnsignedShort(answer.readerIndex() + Wire.FLAGS_OFFSET) & Wire.RCODE_MASK;
        boolean negative = rcode == Wire.RCODE_NXDOMAIN || rcode == Wire.RCODE_NOERROR && records.answersOfType() == 0;
        if (negative && records.negativeTtl() >= 0) {
            min = Math.min(min, records.negativeTtl());
        }
        return Math.max(0, min);
    }
}
