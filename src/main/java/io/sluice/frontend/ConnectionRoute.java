package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.sluice.pipeline.Route;
import io.sluice.transport.SocketProtocol;
import io.sluice.transport.WriteBatch;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * The route back to a client's TCP or TLS connection: one per connection, made at its first query,
 * its answers written on the connection (which frames each with its length) and flushed with the
 * loop's other writes. A query dropped after parking is told to the connection, which counts the
 * answers it owes ({@link #QUERY_DROPPED}).
 */
final class ConnectionRoute implements Route {
    /**
     * The event a connection gets when a query it was told would be answered
     * ({@link io.sluice.pipeline.Outcome#PARKED}) never will be.
     */
    static final Object QUERY_DROPPED = new Object();

    private final Channel channel;
    private final WriteBatch writes;
    private final SocketProtocol protocol;
    private final InetSocketAddress client;
    /** The client proved its address: the handshake was its own, or its proxy's header says it came over a stream. */
    private final boolean verified;

    /**
     * @param proxied          the client the connection's PROXY header named, or null when the peer is the client
     * @param proxiedDatagrams the PROXY header said its client came to the proxy in datagrams
     * @param writes           the writes of the connection's loop
     */
    ConnectionRoute(Channel channel, SocketProtocol protocol, InetSocketAddress proxied, boolean proxiedDatagrams,
                    WriteBatch writes) {
        this.channel = channel;
        this.protocol = protocol;
        this.writes = writes;
        this.client = proxied != null ? proxied : (InetSocketAddress) channel.remoteAddress();
        this.verified = !proxiedDatagrams;
    }

    @Override
    public void send(ByteBuf answer) {
        writes.write(channel, answer);
    }

    @Override
    public InetAddress clientIp() {
        return client.getAddress();
    }

    @Override
    public boolean datagram() {
        return false;
    }

    @Override
    public boolean verified() {
        return verified;
    }

    @Override
    public SocketProtocol protocol() {
        return protocol;
    }

    @Override
    public InetSocketAddress clientAddress() {
        return client;
    }

    @Override
    public InetSocketAddress serverAddress() {
        return (InetSocketAddress) channel.localAddress();
    }

    @Override
    public void dropped(ByteBuf query) {
        channel.pipeline().fireUserEventTriggered(QUERY_DROPPED);
    }

    @Override
    public Channel connection() {
        return channel;
    }
}
