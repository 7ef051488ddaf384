package io.sluice.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.sluice.transport.UdpSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * A copy of a query that a stage keeps while it waits (say, for Redis), where its answer goes, and
 * what the stages before noted of it ({@link Query#answerNote}). Whoever holds it releases it once
 * it is resumed or given up.
 */
public record ParkedQuery(ByteBuf message, Channel client, UdpSocket socket, InetSocketAddress address,
                          InetAddress proxied, boolean answersNobody, long answerNote) {
    public void release() {
        message.release();
    }
}
