package io.sluice.transport;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;

/**
 * How a DNS message travels between two sockets: what dnstap records of each message, in the
 * same four kinds as its {@code SocketProtocol}. A client's TCP connection is marked with its kind
 * when it is set up ({@link #mark}); the one mark serves every message on it.
 */
public enum SocketProtocol {
    UDP, TCP, DOT, DOH;

    private static final AttributeKey<SocketProtocol> KIND = AttributeKey.valueOf(SocketProtocol.class, "kind");

    /** Marks {@code connection}, a client's, as carrying this protocol. */
    public void mark(Channel connection) {
        connection.attr(KIND).set(this);
    }

    /** The protocol of a client's connection; TCP for a connection never marked. */
    public static SocketProtocol of(Channel client) {
        SocketProtocol p = client.attr(KIND).get();
        return p != null ? p : TCP;
    }
}
