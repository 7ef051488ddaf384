package io.sluice.cookie;

import io.sluice.pipeline.Route;
import io.sluice.pipeline.WrappedRoute;

/**
 * The route of a query that came with a COOKIE, wrapped (as CoreDNS's plugins wrap the
 * ResponseWriter) so that the cookie stage finds on the way back the cookie its answer carries:
 * the client's, and the server cookie minted for it. Whether the client proved its address
 * ({@link #verified}) is the query's server cookie's word, or its transport's; every other method
 * is its client's route's. One per such query: it lives as long as the query waits, as the
 * datagram's own route does.
 */
final class CookieRoute extends WrappedRoute {
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

    @Override
    public boolean verified() {
        return validServerCookie || route.verified();
    }

    @Override
    public Route wrapped() {
        return route;
    }
}
