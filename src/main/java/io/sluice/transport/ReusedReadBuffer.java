package io.sluice.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.DefaultMaxMessagesRecvByteBufAllocator;

/**
 * One buffer that every UDP socket of one event loop given it reads into, in turn: the upstream
 * sockets their replies, the listeners their queries (one recvmmsg batch of datagrams at a time).
 * A fresh buffer per read, large enough for the largest datagram, made the allocator create direct
 * memory under load and zero it (2-3% of a saturated loop in that alone; docs/benchmarks.md,
 * "Reused read buffers"); what is read is small and copied out where it must outlive the read.
 *
 * <p>Invariant: a datagram read into this buffer is dead once its {@code channelRead} returns; the
 * next read overwrites it. Nothing may keep a reference to it, only a copy. All the sockets that
 * share it belong to one loop, so reads never overlap; and only a transport that hands each read
 * to the pipeline before the next may use it ({@link Transport#firesEachReadBeforeTheNext}).
 */
public final class ReusedReadBuffer extends DefaultMaxMessagesRecvByteBufAllocator {
    private final ByteBuf buffer;

    public ReusedReadBuffer(ByteBufAllocator allocator, int bytes, int readsPerWakeup) {
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

    /** Gives the buffer back; call once the sockets reading into it are closed. */
    public void release() {
        buffer.release();
    }
}
