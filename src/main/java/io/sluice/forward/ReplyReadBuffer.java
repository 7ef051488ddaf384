package io.sluice.forward;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.DefaultMaxMessagesRecvByteBufAllocator;

/**
 * One 64 KiB buffer that every upstream UDP socket of a loop reads its replies into, in turn.
 * A fresh buffer per read, large enough for any EDNS size a client may ask for, made the
 * allocator create direct memory under load and zero it (2-3% of a saturated loop in that alone,
 * docs/benchmarks.md); a reply is small, so {@link Forwarder#onReply} copies it out.
 *
 * <p>Invariant: a reply read into this buffer is dead once its {@code channelRead} returns; the
 * next read overwrites it. Nothing may keep a reference to it, only a copy. All the sockets that
 * share it belong to one loop, so reads never overlap; and only a transport that hands each read
 * to the pipeline before the next may use it ({@link io.sluice.transport.Transport#firesEachReadBeforeTheNext}).
 */
final class ReplyReadBuffer extends DefaultMaxMessagesRecvByteBufAllocator {
    private final ByteBuf buffer;

    ReplyReadBuffer(ByteBufAllocator allocator, int bytes, int readsPerWakeup) {
        super(readsPerWakeup);
        this.buffer = allocator.directBuffer(bytes, bytes);
    }

    @Override
    public Handle newHandle() {
        return new MaxMessageHandle() {
            @Override
            public ByteBuf allocate(ByteBufAllocator alloc) {
                // Netty releases what it was given once the read is handled (or found nothing):
                // the retain keeps this buffer's own reference alive across that release.
                return buffer.retain().clear();
            }

            @Override
            public int guess() {
                return buffer.capacity();
            }
        };
    }

    void release() {
        buffer.release();
    }
}
