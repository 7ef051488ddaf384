package io.sluice.doh;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.ApplicationProtocolNegotiationHandler;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.frontend.StreamProtocol;
import io.sluice.pipeline.Outcome;
import io.sluice.pipeline.Pipeline;
import io.sluice.transport.ConnectionBounds;
import io.sluice.wire.QueryView;
import io.sluice.wire.ReplyRecords;
import io.sluice.wire.Wire;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * One DNS over HTTPS connection (RFC 8484), set up behind its TLS handler: HTTP/2 when the client
 * chose "h2" by ALPN, HTTP/1.1 otherwise. The listener has already held it to the TCP bounds
 * (connections in all and per client, their rate) and read its PROXY header; here it is closed
 * after {@code tcp-idle-timeout} with no query asked or answered, and, once the server stops, when
 * its last exchange is answered. All of it runs on the connection's event loop: the counts below
 * are plain fields.
 */
public final class DohConnection {
    /**
     * HTTP/1.1 requests decoded and not yet answered, at most: every request of one read (a read
     * stops there while one waits, and holds 64 KiB at most, 16 bytes the shortest request), so
     * that a client that pipelines a whole read of requests has each answered in turn.
     */
    private static final int MAX_PIPELINED = 4096;
    /**
     * How long past the idle timeout an open exchange keeps a connection from closing as idle: far
     * past any query's time in the path (query-timeout, a parked query's backend call).
     */
    private static final long LOST_EXCHANGE_NANOS = TimeUnit.MINUTES.toNanos(1);
    /** The most an HTTP/1.1 request's body is read to before it is refused: a DNS message and room for framing. */
    private static final int MAX_BODY = DohRequest.MAX_MESSAGE + 1;

    private final Pipeline pipeline;
    final StreamProtocol.Meters meters;
    private final AttributeKey<InetSocketAddress> proxiedKey;
    /** What requests and answers are read with, one at a time. */
    private final QueryView view = new QueryView();
    private final ReplyRecords records = new ReplyRecords();
    private final Channel channel;
    private final int maxQueries;
    /** The client: the one a PROXY header named, else the peer; read at the first query. */
    private InetSocketAddress client;
    private int queries;
    /** Queries of this connection in the query path: asked, not yet answered or dropped. */
    private int exchangesOpen;
    /** The last query asked or answer sent: what the idle timeout counts from. */
    private long lastExchangeNanos = System.nanoTime();
    private boolean stopping;
    /** The client chose HTTP/2: told of a wind-down by GOAWAY. */
    private Http2Streams http2;
    /** The client chose HTTP/1.1: its exchange in the path winds the connection down (Connection: close). */
    private Http1Exchange http1;

    private DohConnection(Channel channel, Pipeline pipeline, StreamProtocol.Meters meters, int maxQueries,
                          AttributeKey<InetSocketAddress> proxiedKey) {
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
    public static DohConnection addTo(Channel ch, Pipeline pipeline, StreamProtocol.Meters meters, ConnectionBounds bounds,
                                      AttributeKey<InetSocketAddress> proxiedKey) {
        DohConnection c = new DohConnection(ch, pipeline, meters, bounds.maxQueries(), proxiedKey);
        ScheduledFuture<?> lifetime = ch.eventLoop().schedule(c::stop, bounds.maxDurationNanos(), TimeUnit.NANOSECONDS);
        ScheduledFuture<?> idle = ch.eventLoop().scheduleAtFixedRate(() -> c.closeIfIdle(bounds.idleNanos()),
                bounds.checkNanos(), bounds.checkNanos(), TimeUnit.NANOSECONDS);
        ch.closeFuture().addListener(f -> {
            lifetime.cancel(false);
            idle.cancel(false);
        });
        ch.pipeline().addLast(new ApplicationProtocolNegotiationHandler(ApplicationProtocolNames.HTTP_1_1) {
            @Override
            protected void configurePipeline(ChannelHandlerContext ctx, String protocol) {
                if (ApplicationProtocolNames.HTTP_2.equals(protocol)) {
                    c.http2 = Http2Streams.on(c);
                    ctx.pipeline().addLast(c.http2);
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

    /**
     * Runs {@code message}, a request's DNS query, through the loop's query path as a stream
     * client's (no truncation, the cache's TCP answers, every limit), its answer to come back
     * through {@code route}, which makes it the response. The caller keeps and releases
     * {@code message}.
     *
     * @return null when the query is answered or will be, else what to answer instead at once
     */
    Refusal ask(ByteBuf message, DohRoute route) {
        if (view.read(message) == QueryView.Check.QUERY && view.hasQuestion()
                && (view.qtype() == Wire.TYPE_AXFR || view.qtype() == Wire.TYPE_IXFR)) {
            return Refusal.ZONE_TRANSFER;
        }
        meters.queries().increment();
        lastExchangeNanos = System.nanoTime();
        exchangesOpen++; // before: an answer made at once comes back inside handle, and settles it
        Outcome outcome = pipeline.handle(message, route);
        if (maxQueries > 0 && ++queries >= maxQueries) {
            stop(); // past max-tcp-queries-per-connection: this one is answered, then the connection winds down
        }
        if (outcome == Outcome.ANSWERED || outcome == Outcome.PARKED || !route.settle()) {
            return null; // answered, to be, or already
        }
        return outcome == Outcome.NOT_A_QUERY ? Refusal.NOT_A_QUERY : Refusal.REFUSED;
    }

    /** Queries of this connection in the query path: asked, not yet settled. */
    int exchangesOpen() {
        return exchangesOpen;
    }

    /** An exchange was settled ({@link DohRoute#settle}). */
    void exchangeSettled() {
        exchangesOpen--;
        lastExchangeNanos = System.nanoTime();
    }

    /** A response was written: it is flushed with the loop's other writes. */
    void needsFlush() {
        pipeline.writes().needsFlush(channel);
    }

    /**
     * Closes the connection after {@code tcp-idle-timeout} with no query asked or answered and
     * none in the path: as over TCP, only a whole exchange counts, so that a client's HTTP/2 PING
     * frames or SETTINGS (or anything else it trickles) keep no connection open.
     */
    private void closeIfIdle(long idleNanos) {
        long idle = System.nanoTime() - lastExchangeNanos;
        // An exchange open past any answer's time is one a bug lost: it keeps no connection open.
        if ((exchangesOpen <= 0 && idle >= idleNanos || idle >= idleNanos + LOST_EXCHANGE_NANOS) && channel.isActive()) {
            meters.idleClosed().increment();
            channel.close();
        }
    }

    /** The client: the one a PROXY header named (read before any request), else the peer. */
    InetSocketAddress client() {
        if (client == null) {
            InetSocketAddress proxied = channel.attr(proxiedKey).get();
            client = proxied != null ? proxied : (InetSocketAddress) channel.remoteAddress();
        }
        return client;
    }

    Channel channel() {
        return channel;
    }

    /** The end of a read: the query path may send what it held for it. */
    void endOfRead() {
        pipeline.endOfBurst();
    }

    /**
     * The answer's freshness lifetime for {@code cache-control: max-age} (RFC 8484 section 5.1):
     * its smallest TTL; for a negative answer (NXDOMAIN, NODATA) the SOA's negative TTL if smaller
     * (RFC 2308 section 5); 0 for an answer without records.
     */
    long maxAge(ByteBuf answer) {
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

    /**
     * No request more is taken, and the connection closes once its exchanges are answered: the
     * server is stopping, or a bound was reached.
     */
    public void stop() {
        if (stopping) {
            return;
        }
        stopping = true;
        if (http1 != null) {
            http1.windDown();
        } else if (http2 != null) {
            http2.windDown();
        } else { // before ALPN chose: nothing asked yet
            channel.close();
        }
    }
}
