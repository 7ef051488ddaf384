package io.sluice.frontend;

import io.sluice.limit.Clock;
import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@code tcp-connection-rate-per-client}: new TCP and TLS connections a second from one client (an
 * IPv4 address or IPv6 /64, as {@link TcpListener#clientOf} says), in whole seconds of the clock.
 * An open connection is bounded by {@code max-tcp-connections-per-client}; this bounds how fast a
 * client may open and close them, each a TLS handshake's CPU on an event loop.
 *
 * <p>Called from every loop as connections are set up, not per query. Memory: one small entry
 * per client of the current second; past {@link #PRUNE_AT} entries, those of earlier seconds go.
 */
final class ConnectionRate {
    static final int PRUNE_AT = 1 << 16;
    private static final long SECOND_NANOS = 1_000_000_000L;

    private final int perSecond;
    private final Clock clock;
    /** Per client: the second counted, then the connections opened in it. */
    private final ConcurrentHashMap<InetAddress, long[]> seconds = new ConcurrentHashMap<>();

    /** @param perSecond connections a second a client may open; 0: no bound */
    ConnectionRate(int perSecond, Clock clock) {
        this.perSecond = perSecond;
        this.clock = clock;
    }

    /** Counts a new connection from {@code client}: false when it is one more than its second allows. */
    boolean admit(InetAddress client) {
        if (perSecond == 0) {
            return true;
        }
        long second = Math.floorDiv(clock.epochNanos(), SECOND_NANOS);
        if (seconds.size() > PRUNE_AT) {
            seconds.values().removeIf(w -> w[0] != second);
        }
        long[] opened = new long[1];
        seconds.compute(client, (c, w) -> {
            long[] window = w == null || w[0] != second ? new long[] {second, 0} : w;
            opened[0] = ++window[1];
            return window;
        });
        return opened[0] <= perSecond;
    }
}
