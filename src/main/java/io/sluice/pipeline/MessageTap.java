package io.sluice.pipeline;

import io.netty.buffer.ByteBuf;
import io.sluice.transport.SocketProtocol;
import java.net.InetSocketAddress;

/**
 * Sees the messages of a forwarder's exchanges that happen past the stages: each answer as it
 * leaves through its route, each query sent upstream and each reply taken from one (dnstap; its
 * stage sees each client's query on the way in). The pipeline and the forwarder hold one only
 * when it is on (else null: the query path pays a null check). Called on the loops; the buffers
 * are valid only during the call, and are not changed.
 */
public interface MessageTap {
    /** An answer about to leave through {@code route}. */
    void clientResponse(ByteBuf message, Route route);

    /** A query about to go to an upstream at {@code upstream} from {@code local} (null when not yet known). */
    void forwarderQuery(ByteBuf message, SocketProtocol protocol, InetSocketAddress local, InetSocketAddress upstream);

    /** An upstream's reply, accepted as the answer to a query in flight, before sluice changes it. */
    void forwarderResponse(ByteBuf message, SocketProtocol protocol, InetSocketAddress local, InetSocketAddress upstream);
}
