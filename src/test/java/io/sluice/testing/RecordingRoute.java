package io.sluice.testing;

import io.netty.buffer.ByteBuf;
import io.sluice.pipeline.Route;
import io.sluice.transport.SocketProtocol;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/** A route back to a client that keeps what it is sent; a datagram's unless made {@link #stream}. */
public final class RecordingRoute implements Route {
    private final InetSocketAddress client;
    private final boolean datagram;
    /** What was sent, in order; the buffers are the caller's to release. */
    public final List<ByteBuf> sent = new ArrayList<>();
    /** IDs of queries told dropped after parking. */
    public final List<Integer> dropped = new ArrayList<>();

    private RecordingRoute(InetSocketAddress client, boolean datagram) {
        this.client = client;
        this.datagram = datagram;
    }

    public static RecordingRoute datagram(InetSocketAddress client) {
        return new RecordingRoute(client, true);
    }

    public static RecordingRoute stream(InetSocketAddress client) {
        return new RecordingRoute(client, false);
    }

    @Override
    public void send(ByteBuf answer) {
        sent.add(answer);
    }

    @Override
    public InetAddress clientIp() {
        return client.getAddress();
    }

    @Override
    public boolean datagram() {
        return datagram;
    }

    @Override
    public SocketProtocol protocol() {
        return datagram ? SocketProtocol.UDP : SocketProtocol.TCP;
    }

    @Override
    public InetSocketAddress clientAddress() {
        return client;
    }

    @Override
    public InetSocketAddress serverAddress() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), 53);
    }

    @Override
    public void dropped(ByteBuf query) {
        dropped.add(query.getUnsignedShort(query.readerIndex()));
    }
}
