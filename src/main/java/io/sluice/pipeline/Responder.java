package io.sluice.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import java.net.InetSocketAddress;

/** Writes a message to a client, batching the flushes of one wake-up (the forwarder does). */
public interface Responder {
    /**
     * Sends {@code message} (whose reference this takes) as a datagram to {@code address}, or
     * framed on the TCP connection {@code client} when {@code address} is null.
     */
    void answer(Channel client, InetSocketAddress address, ByteBuf message);

    /**
     * As {@link #answer}, for an answer its maker counts itself (an answer cache's); the same as
     * {@code answer} for a responder that counts nothing.
     */
    default void send(Channel client, InetSocketAddress address, ByteBuf message) {
        answer(client, address, message);
    }
}
