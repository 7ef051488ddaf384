package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.group.ChannelGroup;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.ssl.SslContext;
import io.netty.util.AttributeKey;
import io.sluice.acl.ClientRules;
import io.sluice.config.Settings;
import io.sluice.limit.Clock;
import io.sluice.pipeline.Pipeline;
import io.sluice.transport.ConnectionBounds;
import io.sluice.transport.ProxyHeader;
import io.sluice.transport.SocketProtocol;
import io.sluice.transport.TcpFraming;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Sets up each client TCP connection: two-byte length framing (RFC 1035 section 4.2.2), several
 * queries per connection answered in any order (RFC 7766), and the bounds that keep TCP from
 * being held hostage: connections at once (in all, and from one client), an idle timeout that
 * only a whole query resets (a frame trickled in a byte at a time does not), queries per
 * connection and connection time. A client that half-closes gets what it asked for, then the
 * close; one that sends something that is not a query (no ID, QR=1) is closed at once. A client
 * that does not read its answers stops being read: see {@link TcpConnection}.
 *
 * <p>A connection from a {@code proxy-protocol-from} source starts with a PROXY header, and its
 * queries are the client's it names ({@link ProxyHeaderReader}). Such a proxy carries many clients:
 * its connections are not held to allow-clients at accept (each query is, as the named client's)
 * nor counted against {@code max-tcp-connections-per-client}; {@code max-tcp-connections} bounds them.
 */
final class TcpListener extends ChannelInitializer<Channel> {
    private final Map<EventLoop, Pipeline> pipelines;
    private final ListenerMeters meters;
    private final ClientRules allowed;
    private final ChannelGroup open;
    private final AtomicInteger connections = new AtomicInteger();
    /**
     * Open connections by client ({@link #clientOf}); a client leaves the map with its last
     * connection.
     */
    private final ConcurrentHashMap<InetAddress, Integer> perClient = new ConcurrentHashMap<>();
    private final int maxConnections;
    private final int maxPerClient;
    private final ConnectionBounds bounds;
    private final ConnectionRate rate;
    private final StreamProtocol tcpMessages = dnsMessages(SocketProtocol.TCP);
    private final StreamProtocol.Meters tcpMeters;
    /** {@link #stop} has begun: a connection set up from now on is told at once. */
    private volatile boolean stopping;

    TcpListener(Map<EventLoop, Pipeline> pipelines, ListenerMeters meters, ClientRules allowed, ChannelGroup open,
                Settings settings, Clock clock) {
        this.rate = new ConnectionRate(settings.tcpConnectionRatePerClient(), clock);
        this.pipelines = pipelines;
        this.meters = meters;
        this.allowed = allowed;
        this.open = open;
        this.maxConnections = settings.maxTcpConnections();
        this.maxPerClient = settings.tcpPerClient();
        this.tcpMeters = new StreamProtocol.Meters(meters.queriesTcp, meters.tlsHandshakeFailed, meters.tcpIdleClosed,
                meters.ioErrors);
        this.bounds = new ConnectionBounds(settings.tcpIdleTimeout().toNanos(), settings.tcpQueriesPerConnection(),
                settings.tcpMaxDuration().toNanos());
    }

    /** Sets up a client's TCP connection: DNS messages framed by their length (RFC 1035). */
    @Override
    protected void initChannel(Channel ch) {
        if (!admit(ch)) {
            return;
        }
        tcpMessages.setUp(ch, pipelines.get(ch.eventLoop()), bounds, PROXIED, tcpMeters);
        tellIfStopping(ch);
    }

    /**
     * DNS messages framed by their two-byte length on a connection (RFC 1035 section 4.2.2, RFC
     * 7766; DNS over TLS, RFC 7858, the same inside TLS), which {@link TcpConnection} answers, as
     * {@code protocol}; it winds down on the listeners' stop itself.
     */
    StreamProtocol dnsMessages(SocketProtocol protocol) {
        return (ch, pipeline, connectionBounds, proxied, counted) -> {
            TcpFraming.addTo(ch.pipeline());
            ch.pipeline().addLast(new TcpConnection(pipeline, meters, counted.queries(), connectionBounds, protocol));
            return null;
        };
    }

    /**
     * Sets up a connection of a TLS front end (DNS over TLS, over HTTPS): the same bounds, then TLS
     * with {@code tls}, then {@code protocol}; the listener's stop reaches its wind-down, or its own
     * handlers when it has none.
     */
    void setUp(Channel ch, SslContext tls, StreamProtocol protocol, StreamProtocol.Meters protocolMeters) {
        if (!admit(ch)) {
            return;
        }
        ch.pipeline().addLast(tls.newHandler(ch.alloc()));
        Runnable stop = protocol.setUp(ch, pipelines.get(ch.eventLoop()), bounds, PROXIED, protocolMeters);
        if (stop == null) {
            tellIfStopping(ch); // it heeds the stop itself
            return;
        }
        ch.pipeline().addFirst(new ChannelInboundHandlerAdapter() {
            @Override
            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                if (evt == STOP_READING) {
                    stop.run();
                } else {
                    ctx.fireUserEventTriggered(evt);
                }
            }
        });
        tellIfStopping(ch);
    }

    /**
     * Holds a new connection to the rules and bounds every TCP listener shares (allow-clients, the
     * connection rate and the connections in all and per client), and reads a proxy's PROXY
     * header; false when it was closed for one of them.
     */
    private boolean admit(Channel ch) {
        InetAddress client = ((InetSocketAddress) ch.remoteAddress()).getAddress();
        ClientRules.Rules rules = allowed.now(); // one read: the rules of before or after a reload, not a mix
        boolean proxy = rules.speaksForClients(client);
        // A client outside allow-clients gets no connection at all: held open, its connections
        // would take the places of the clients it may not crowd out.
        if (!proxy && !rules.allows(client)) {
            meters.aclDenied.increment();
            ch.close();
            return false;
        }
        InetAddress counted = rules.heldToClientBounds(client) ? clientOf(client) : null;
        if (counted != null && !rate.admit(counted)) {
            meters.tcpRateRejected.increment();
            ch.close();
            return false;
        }
        if (connections.incrementAndGet() > maxConnections) {
            connections.decrementAndGet();
            meters.tcpConnectionsRejected.increment();
            ch.close();
            return false;
        }
        if (counted != null) {
            int[] fromClient = new int[1];
            perClient.compute(counted, (a, n) -> fromClient[0] = n == null ? 1 : n + 1);
            if (fromClient[0] > maxPerClient) {
                leave(counted);
                connections.decrementAndGet();
                meters.tcpClientLimitRejected.increment();
                ch.close();
                return false;
            }
        }
        ch.closeFuture().addListener(f -> {
            if (counted != null) {
                leave(counted);
            }
            connections.decrementAndGet();
        });
        open.add(ch);
        if (proxy) {
            ch.pipeline().addLast(new ProxyHeaderReader(meters)); // a proxy's header comes before TLS
        }
        return true;
    }

    /**
     * After the add to the group: a stop either finds this connection there or has set the flag
     * before this reads it. A connection accepted just before the stop is set up after it.
     */
    private void tellIfStopping(Channel ch) {
        if (stopping) {
            ch.pipeline().fireUserEventTriggered(STOP_READING);
        }
    }

    /**
     * Tells every connection, and any set up from now on, to take no query more, answer those it
     * has read and close ({@link #STOP_READING}); each is told on its own loop.
     */
    void stop() {
        stopping = true;
        for (Channel ch : open) {
            ch.pipeline().fireUserEventTriggered(STOP_READING);
        }
    }

    /**
     * Whom {@code max-tcp-connections-per-client} counts a connection against: an IPv4 address,
     * or an IPv6 address's /64, which one host is commonly given whole, so that its 2^64
     * addresses are one client.
     */
    static InetAddress clientOf(InetAddress address) {
        if (!(address instanceof Inet6Address)) {
            return address;
        }
        byte[] network = Arrays.copyOf(address.getAddress(), 16);
        Arrays.fill(network, 8, 16, (byte) 0);
        try {
            return InetAddress.getByAddress(network);
        } catch (UnknownHostException e) {
            throw new AssertionError(e); // sixteen octets are always an address
        }
    }

    /**
     * Fired at a connection when the listeners shut down: it takes no query more, answers those it
     * has read (waiting ones too), then closes.
     */
    static final Object STOP_READING = new Object();

    private void leave(InetAddress client) {
        perClient.computeIfPresent(client, (a, n) -> n <= 1 ? null : n - 1);
    }

    /** The client a connection's PROXY header named; unset (null) when the peer is the client. */
    static final AttributeKey<InetSocketAddress> PROXIED = AttributeKey.valueOf(TcpListener.class, "proxied");
    /** Set when the connection's PROXY header said its client came to the proxy in datagrams. */
    static final AttributeKey<Boolean> PROXIED_DATAGRAMS = AttributeKey.valueOf(TcpListener.class, "proxiedDatagrams");

    /**
     * Reads a proxy's connection's PROXY header, before any framing: notes the client it names
     * and hands the bytes after it on, or closes a connection that does not start with one. Until
     * the header is whole, the connection's idle timeout runs: a proxy that never completes it is
     * closed as idle.
     */
    private static final class ProxyHeaderReader extends ByteToMessageDecoder {
        private final ListenerMeters meters;

        ProxyHeaderReader(ListenerMeters meters) {
            this.meters = meters;
        }

        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
            int header = ProxyHeader.length(in);
            if (header == ProxyHeader.INCOMPLETE) {
                return;
            }
            if (header == ProxyHeader.INVALID) {
                meters.proxyHeaderInvalid.increment();
                in.skipBytes(in.readableBytes());
                ctx.close();
                return;
            }
            ctx.channel().attr(PROXIED).set(ProxyHeader.source(in));
            ctx.channel().attr(PROXIED_DATAGRAMS).set(ProxyHeader.fromDatagram(in));
            in.skipBytes(header);
            ctx.pipeline().remove(this); // what follows the header goes on to the framing
        }
    }

}
