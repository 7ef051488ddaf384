package io.sluice.doh;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http2.DefaultHttp2GoAwayFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.ApplicationProtocolNegotiationHandler;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.pipeline.Pipeline;
import io.sluice.transport.ConnectionBounds;
import io.sluice.wire.QueryView;
import io.sluice.wire.ReplyRecords;
import java.net.InetAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * One DNS over HTTPS connection (RFC 8484), set up behind its TLS handler: HTTP/2 when the client
 * chose "h2" by ALPN, HTTP/1.1 otherwise. The listener has already held it to the TCP bounds
 * (connections in all and per client, their rate) and read its PROXY header; here it is closed
 * after {@code tcp-idle-timeout} with nothing read or written, and, once the server stops, when
 * its last exchange is answered. All of it runs on the connection's event loop, HTTP/2's streams
 * included (their channels share their parent's loop): the counts below are plain fields.
 */
public final class DohConnection {
    /** The counters a connection adds to, the listener's. */
    public record Meters(LongAdder queries, LongAdder handshakeFailed, LongAdder idleClosed, LongAdder ioErrors) {
    }

    /**
     * Streams a client may have open at once, nginx's and h2o's order: the bound on what a client
     * that asks and never reads (never opens its flow-control window) makes a connection hold, at
     * most this many answers. A TCP connection's backlog bound of a MiB cannot serve here: HTTP/2
     * must read on for the client's WINDOW_UPDATEs, and a client's streams come in one read,
     * before any answer is held.
     */
    static final int MAX_STREAMS = 100;
    /**
     * HTTP/1.1 requests decoded and not yet answered, at most: every request of one read (a read
     * stops there while one waits, and holds 64 KiB at most, 16 bytes the shortest request). The
     * codec's default, 128, closed a connection that pipelined more in one burst, unanswered.
     */
    private static final int MAX_PIPELINED = 4096;
    /** The most an HTTP/1.1 request's body is read to before it is refused: a DNS message and room for framing. */
    private static final int MAX_BODY = DohRequest.MAX_MESSAGE + 1;

    final Pipeline pipeline;
    final Meters meters;
    final AttributeKey<InetAddress> proxiedKey;
    /** What the exchanges read requests and answers with, one at a time: shared, not made per HTTP/2 stream. */
    final QueryView view = new QueryView();
    final ReplyRecords records = new ReplyRecords();
    private final Channel channel;
    private final int maxQueries;
    /** Exchanges handed to the pipeline and not answered yet. */
    int outstanding;
    private int queries;
    private boolean stopping;
    /** The client chose HTTP/2: it is told of a wind-down by GOAWAY, and retries elsewhere what was not taken. */
    private boolean http2;
    /** The client chose HTTP/1.1: its one exchange winds the connection down (Connection: close). */
    private Http1Exchange http1;

    private DohConnection(Channel channel, Pipeline pipeline, Meters meters, int maxQueries,
                          AttributeKey<InetAddress> proxiedKey) {
        this.channel = channel;
        this.maxQueries = maxQueries;
        this.pipeline = pipeline;
        this.meters = meters;
        this.proxiedKey = proxiedKey;
    }

    /**
     * Adds the HTTP handlers to {@code ch}'s pipeline, after its TLS handler.
     *
     * @param proxiedKey where the listener noted the client a PROXY header named, if any
     */
    public static DohConnection addTo(Channel ch, Pipeline pipeline, Meters meters, ConnectionBounds bounds,
                                      AttributeKey<InetAddress> proxiedKey) {
        DohConnection c = new DohConnection(ch, pipeline, meters, bounds.maxQueries(), proxiedKey);
        ScheduledFuture<?> lifetime = ch.eventLoop().schedule(c::stop, bounds.maxDurationNanos(), TimeUnit.NANOSECONDS);
        ch.closeFuture().addListener(f -> lifetime.cancel(false));
        ch.pipeline().addLast(new IdleStateHandler(0, 0, bounds.idleNanos(), TimeUnit.NANOSECONDS));
        ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
            @Override
            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                if (evt instanceof IdleStateEvent) {
                    meters.idleClosed().increment();
                    ctx.close();
                } else {
                    ctx.fireUserEventTriggered(evt);
                }
            }
        });
        ch.pipeline().addLast(new ApplicationProtocolNegotiationHandler(ApplicationProtocolNames.HTTP_1_1) {
            @Override
            protected void configurePipeline(ChannelHandlerContext ctx, String protocol) {
                if (ApplicationProtocolNames.HTTP_2.equals(protocol)) {
                    c.http2 = true;
                    ctx.pipeline().addLast(Http2FrameCodecBuilder.forServer()
                            .initialSettings(Http2Settings.defaultSettings().maxConcurrentStreams(MAX_STREAMS))
                            .build());
                    ctx.pipeline().addLast(new Http2MultiplexHandler(new ChannelInitializer<Http2StreamChannel>() {
                        @Override
                        protected void initChannel(Http2StreamChannel stream) {
                            stream.pipeline().addLast(new Http2Exchange(c));
                        }
                    }));
                } else {
                    ctx.pipeline().addLast(new HttpServerCodec(new HttpDecoderConfig(), MAX_PIPELINED));
                    ctx.pipeline().addLast(new Http1Exchange.Aggregator(MAX_BODY));
                    c.http1 = new Http1Exchange(c);
                    ctx.pipeline().addLast(c.http1);
                }
            }

            @Override
            protected void handshakeFailure(ChannelHandlerContext ctx, Throwable cause) {
                meters.handshakeFailed().increment(); // not logged: a scanner's junk is not news
                ctx.close();
            }

            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                meters.ioErrors().increment();
                ctx.close();
            }
        });
        return c;
    }

    /** One query read: past max-tcp-queries-per-connection, the connection winds down. */
    void counted() {
        if (maxQueries > 0 && ++queries >= maxQueries) {
            stop();
        }
    }

    /**
     * No request more is read, and the connection closes once its exchanges are answered: the
     * server is stopping, or a bound was reached.
     */
    public void stop() {
        if (stopping) {
            return;
        }
        stopping = true;
        if (http1 != null) {
            http1.windDown();
            return;
        }
        if (!http2) { // before ALPN chose: nothing asked yet
            channel.close();
            return;
        }
        // GOAWAY at once, before the answers still owed: a client that has it opens no stream more
        // here, and asks its next query on a new connection. It reads on, to refuse a stream opened
        // meanwhile (DohExchange) rather than leave it unanswered.
        channel.writeAndFlush(new DefaultHttp2GoAwayFrame(Http2Error.NO_ERROR));
        closeIfDone();
    }

    /** One exchange answered, dropped or gone; on the connection's loop. */
    void answered() {
        outstanding--;
        closeIfDone();
    }

    /** Winding down on HTTP/2: a new stream is refused (RST_STREAM REFUSED_STREAM), which the client asks again elsewhere. */
    boolean refusesStreams() {
        return stopping && http2;
    }

    /**
     * Closes once the last exchange is answered: after the answers written in this wake-up are
     * flushed. Over HTTP/2 the frame codec's close is the graceful one (GOAWAY, then the close).
     */
    private void closeIfDone() {
        if (stopping && http2 && outstanding <= 0) {
            // after the answers written in this wake-up are flushed (the loop's tasks run after it)
            channel.eventLoop().execute(() -> {
                channel.flush();
                channel.close();
            });
        }
    }
}
