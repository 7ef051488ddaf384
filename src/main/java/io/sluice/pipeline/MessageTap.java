package io.sluice.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.sluice.transport.SocketProtocol;
import io.sluice.transport.UdpSocket;
import java.net.InetSocketAddress;

/**
 * Sees each message sluice receives from a client, sends to one, sends upstream and takes from an
 * upstream, with where it went and came from: dnstap's four kinds of a forwarder's messages. The
 * forwarder and the pipeline hold one only when it is on (else null: the query path pays a null
 * check). Called on the loops; the buffers are valid only during the call, and are not changed.
 */
public interface MessageTap {
    /**
     * A client's message, as it arrived: in a datagram to {@code address} from {@code socket} when
     * {@code address} is set, else on the connection {@code client}; read at {@code epochNanos}.
     */
    void clientQuery(ByteBuf message, Channel client, UdpSocket socket, InetSocketAddress address, long epochNanos);

    /** An answer about to go to a client, addressed as {@link #clientQuery}'s. */
    void clientResponse(ByteBuf message, Channel client, UdpSocket socket, InetSocketAddress address);

    /** A query about to go to an upstream at {@code upstream} from {@code local} (null when not yet known). */
    void forwarderQuery(ByteBuf message, SocketProtocol protocol, InetSocketAddress local, InetSocketAddress upstream);

    /** An upstream's reply, accepted as the answer to a query in flight, before sluice changes it. */
    void forwarderResponse(ByteBuf message, SocketProtocol protocol, InetSocketAddress local, InetSocketAddress upstream);
}
