package io.sluice.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.sluice.transport.SocketProtocol;
import io.sluice.transport.WriteBatch;
import io.sluice.wire.Wire;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * The route back to a client connection (TCP, TLS or HTTPS): one per connection, made at its first
 * query, its answers written on the connection and flushed with the loop's other writes. The
 * handlers of the connection make the answer their frame: the length prefix, or an HTTP response.
 */
public final class ChannelRoute implements Route {
    private final Channel channel;
    private final WriteBatch writes;
    private final SocketProtocol protocol;
    private final InetSocketAddress client;

    /**
     * @param proxied the client the connection's PROXY header named, or null when the peer is the client
     * @param writes  the writes of the connection's loop
     */
    public ChannelRoute(Channel channel, SocketProtocol protocol, InetSocketAddress proxied, WriteBatch writes) {
        this.channel = channel;
        this.protocol = protocol;
        this.writes = writes;
        this.client = proxied != null ? proxied : (InetSocketAddress) channel.remoteAddress();
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
        channel.pipeline().fireUserEventTriggered(
                new DroppedQuery(query.getUnsignedShort(query.readerIndex() + Wire.ID_OFFSET)));
    }

    @Override
    public Channel connection() {
        return channel;
    }
}
