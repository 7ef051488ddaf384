package io.sluice.doh;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.sluice.pipeline.Route;
import io.sluice.transport.SocketProtocol;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * The route back to one DoH exchange: the connection's client, and the exchange that makes the
 * answer its HTTP response ({@link #send}), over HTTP/2 a stream's, over HTTP/1.1 the request in
 * the query path. A query the path drops after parking is refused ({@link #dropped}): an HTTP
 * client must get a response.
 */
abstract class DohRoute implements Route {
    private final DohConnection connection;
    /** The exchange is settled: answered, dropped after parking, or refused at once. */
    private boolean settled;

    DohRoute(DohConnection connection) {
        this.connection = connection;
    }

    /**
     * Settles the exchange, the first time only: an answer that comes after (a bug's: the query
     * refused at once, yet forwarded) is no one's. The connection counts the exchange out then.
     *
     * @return whether this call settled it
     */
    final boolean settle() {
        if (settled) {
            return false;
        }
        settled = true;
        connection.exchangeSettled();
        return true;
    }

    @Override
    public abstract void send(ByteBuf answer);

    @Override
    public abstract void dropped(ByteBuf query);

    @Override
    public InetAddress clientIp() {
        return connection.client().getAddress();
    }

    @Override
    public boolean datagram() {
        return false;
    }

    @Override
    public SocketProtocol protocol() {
        return SocketProtocol.DOH;
    }

    @Override
    public InetSocketAddress clientAddress() {
        return connection.client();
    }

    @Override
    public InetSocketAddress serverAddress() {
        return (InetSocketAddress) connection.channel().localAddress();
    }

    /** The connection: its answers carry TCP's hop-by-hop options, as every stream transport's. */
    @Override
    public Channel connection() {
        return connection.channel();
    }
}
