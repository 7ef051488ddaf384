package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.sluice.pipeline.Route;
import io.sluice.transport.SocketProtocol;
import io.sluice.transport.UdpSocket;
import io.sluice.transport.WriteBatch;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * The route back to a UDP client: its answer leaves the socket the query came in on, for the
 * address it came from (its proxy's, when a PROXY header named the client). One per datagram:
 * a query kept past the stages (forwarded, parked) keeps it, and the object is cheap beside the
 * sender's address each datagram already brings (docs/benchmarks.md, "Head-to-head pairs (scripts/bench-ab)").
 */
final class DatagramRoute implements Route {
    private final WriteBatch writes;
    private final UdpSocket socket;
    private final InetSocketAddress sender;
    /** The client a PROXY header named, or null: the sender is the client. */
    private final InetSocketAddress proxied;

    DatagramRoute(WriteBatch writes, UdpSocket socket, InetSocketAddress sender, InetSocketAddress proxied) {
        this.writes = writes;
        this.socket = socket;
        this.sender = sender;
        this.proxied = proxied;
    }

    @Override
    public void send(ByteBuf answer) {
        writes.datagram(socket, sender, answer);
    }

    @Override
    public InetAddress clientIp() {
        return proxied != null ? proxied.getAddress() : sender.getAddress();
    }

    @Override
    public boolean datagram() {
        return true;
    }

    @Override
    public SocketProtocol protocol() {
        return SocketProtocol.UDP;
    }

    @Override
    public InetSocketAddress clientAddress() {
        return proxied != null ? proxied : sender;
    }

    @Override
    public InetSocketAddress serverAddress() {
        return socket.localAddress();
    }
}
