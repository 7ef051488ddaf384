package io.sluice.cookie;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.sluice.pipeline.Route;
import io.sluice.transport.SocketProtocol;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * The route of a query that came with a COOKIE, wrapped (as CoreDNS's plugins wrap the
 * ResponseWriter) so that the cookie stage finds on the way back the cookie its answer carries:
 * the client's, and the server cookie minted for it. Whether the client proved its address
 * ({@link #verified}) is the query's server cookie's word, or its transport's; every other method
 * is its client's route's. One per such query: it lives as long as the query waits, as the
 * datagram's own route does.
 */
final class CookieRoute implements Route {
    private final Route route;
    /** The cookie the answer carries, as {@code wire.CookieOption} hands its parts around. */
    final long client;
    final long serverHead;
    final long serverHash;
    private final boolean validServerCookie;
    /** The most a UDP answer to it may carry, cookie and all: its payload size, at most max-udp-size. */
    final int udpLimit;

    CookieRoute(Route route, long client, long serverHead, long serverHash, boolean validServerCookie, int udpLimit) {
        this.route = route;
        this.client = client;
        this.serverHead = serverHead;
        this.serverHash = serverHash;
        this.validServerCookie = validServerCookie;
        this.udpLimit = udpLimit;
    }

    /** The cookie route among {@code r} and the routes it wraps, or null. */
    static CookieRoute in(Route r) {
        for (; r != null; r = r.wrapped()) {
            if (r instanceof CookieRoute c) {
                return c;
            }
        }
        return null;
    }

    @Override
    public boolean verified() {
        return validServerCookie || route.verified();
    }

    @Override
    public Route wrapped() {
        return route;
    }

    @Override
    public void send(ByteBuf answer) {
        route.send(answer);
    }

    @Override
    public InetAddress clientIp() {
        return route.clientIp();
    }

    @Override
    public boolean datagram() {
        return route.datagram();
    }

    @Override
    public SocketProtocol protocol() {
        return route.protocol();
    }

    @Override
    public InetSocketAddress clientAddress() {
        return route.clientAddress();
    }

    @Override
    public InetSocketAddress serverAddress() {
        return route.serverAddress();
    }

    @Override
    public boolean answersSomebody() {
        return route.answersSomebody();
    }

    @Override
    public void dropped(ByteBuf query) {
        route.dropped(query);
    }

    @Override
    public Channel connection() {
        return route.connection();
    }
}
