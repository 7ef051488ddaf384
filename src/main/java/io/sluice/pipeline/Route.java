package io.sluice.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.sluice.transport.SocketProtocol;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * Who asked a query, over what, and how its answer goes back: the one value a front end hands the
 * query path with each message (CoreDNS's {@code ResponseWriter}). A UDP listener makes one per
 * datagram ({@code frontend.DatagramRoute}), a TCP or TLS connection one for all its queries
 * ({@code frontend.ConnectionRoute}), DNS over HTTPS one per HTTP/2 stream or one per HTTP/1.1
 * connection ({@code doh.DohRoute}). Nothing on the query path asks which transport a query came
 * over but through this.
 *
 * <p>An answer leaves through {@link #send} once, at the end of the way back
 * ({@link Stage.Continuation#back}), on the route's loop.
 */
public interface Route {
    /** Sends {@code answer} (whose reference this takes) to the client. */
    void send(ByteBuf answer);

    /**
     * The client's IP address: the one its proxy's PROXY header named, or the peer's. What the
     * client rules, the exemptions and per-client budgets judge.
     */
    InetAddress clientIp();

    /** The query came in a datagram: its answer must fit the UDP payload size the query offers. */
    boolean datagram();

    /** What the query came over, as dnstap names it. */
    SocketProtocol protocol();

    /** The client's address and port, as dnstap logs it: the one a PROXY header named, or the peer's. */
    InetSocketAddress clientAddress();

    /** The address the query was received on. */
    InetSocketAddress serverAddress();

    /**
     * Whether the client has proved it owns its address: a stream's handshake did (TCP, TLS, DNS
     * over HTTPS), and over UDP a valid server cookie ({@code cookie.CookieStage}). A PROXY
     * header's client is as proved as the transport the proxy took it in on says.
     */
    default boolean verified() {
        return !datagram();
    }

    /**
     * The route this one wraps, when a stage wrapped its query's ({@link Query#reroute}, a
     * {@link WrappedRoute}): a stage finds its own wrapper on the way back through the ones wrapped
     * around it ({@link WrappedRoute#find}). Null for a client's own.
     */
    default Route wrapped() {
        return null;
    }

    /** Whether an answer sent here reaches anyone: not a prefetch's ({@link #nobody}). */
    default boolean answersSomebody() {
        return true;
    }

    /**
     * The query {@code query}, told it would be answered ({@link Outcome#PARKED}), never will be:
     * a connection counts the answers it owes.
     */
    default void dropped(ByteBuf query) {
    }

    /** The connection answers go out on, for a zone transfer's many messages; null for a datagram. */
    default Channel connection() {
        return null;
    }

    /**
     * Where a prefetch's answer goes: to no one, the cache having seen it on the way back; asked as
     * over UDP ({@code datagram}) or over TCP, as the query it refreshes was.
     */
    static Route nobody(boolean datagram) {
        return datagram ? Nobody.DATAGRAM : Nobody.STREAM;
    }

    /** {@link #nobody}'s two routes. */
    enum Nobody implements Route {
        DATAGRAM, STREAM;

        @Override
        public void send(ByteBuf answer) {
            answer.release();
        }

        @Override
        public InetAddress clientIp() {
            return InetAddress.getLoopbackAddress();
        }

        @Override
        public boolean datagram() {
            return this == DATAGRAM;
        }

        @Override
        public SocketProtocol protocol() {
            return datagram() ? SocketProtocol.UDP : SocketProtocol.TCP;
        }

        @Override
        public InetSocketAddress clientAddress() {
            return null;
        }

        @Override
        public InetSocketAddress serverAddress() {
            return null;
        }

        @Override
        public boolean answersSomebody() {
            return false;
        }
    }
}
