package io.sluice.transport;

import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;

/**
 * DNS over TCP's framing (RFC 1035 section 4.2.2; RFC 7766): every message preceded by its
 * length in two octets. The same for client connections, upstream connections and the load tool.
 */
public final class TcpFraming {
    private TcpFraming() {
    }

    /** The largest message two length octets can frame. */
    public static final int MAX_MESSAGE_BYTES = 65535;

    /** Adds the framing to a new connection's pipeline: whole messages in, length-prefixed out. */
    public static void addTo(ChannelPipeline pipeline) {
        pipeline.addLast(new LengthFieldBasedFrameDecoder(MAX_MESSAGE_BYTES, 0, 2, 0, 2), new LengthFieldPrepender(2));
    }
}
