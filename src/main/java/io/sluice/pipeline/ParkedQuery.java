package io.sluice.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import java.net.InetSocketAddress;

/**
 * A copy of a query that a stage keeps while it waits (say, for Redis), and where its answer goes.
 * Whoever holds it releases it once it is resumed or given up.
 */
public record ParkedQuery(ByteBuf message, Channel client, InetSocketAddress address) {
    public void release() {
        message.release();
    }
}
