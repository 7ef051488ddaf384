package io.sluice.transport;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.handler.codec.MessageToByteEncoder;

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
        pipeline.addLast(whole(), new LengthFieldPrepender(2));
    }

    /**
     * {@link #addTo}, each message written with its length as one buffer, which a TLS handler that
     * does not aggregate ({@link UpstreamTls}) seals as a record of its own. Two queries in one
     * record stall servers that read one message per readiness event: nsd 4.6.1 and dnsdist 1.7.3
     * answer the first and hold the second until more data comes (Unbound 1.17 answers both).
     */
    public static void addOneRecordEachTo(ChannelPipeline pipeline) {
        pipeline.addLast(whole(), new WholeFrame());
    }

    /** Whole messages in: the length octets read and dropped. */
    private static LengthFieldBasedFrameDecoder whole() {
        return new LengthFieldBasedFrameDecoder(MAX_MESSAGE_BYTES, 0, 2, 0, 2);
    }

    /** The length and the message in one buffer (a copy: a query is tens of bytes). */
    private static final class WholeFrame extends MessageToByteEncoder<ByteBuf> {
        @Override
        protected ByteBuf allocateBuffer(ChannelHandlerContext ctx, ByteBuf msg, boolean preferDirect) {
            return ctx.alloc().directBuffer(2 + msg.readableBytes());
        }

        @Override
        protected void encode(ChannelHandlerContext ctx, ByteBuf msg, ByteBuf out) {
            out.writeShort(msg.readableBytes());
            out.writeBytes(msg, msg.readerIndex(), msg.readableBytes());
        }
    }
}
