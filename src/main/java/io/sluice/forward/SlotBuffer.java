package io.sluice.forward;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * A direct buffer that one in-flight slot keeps and refills for every query it carries, where a
 * pooled buffer per copy would otherwise be taken and given back. Each query is copied twice (the
 * query sent upstream, the reply sent back); a kept buffer is warm in the cache and costs the
 * allocator nothing (docs/benchmarks.md, "Design choices measured", "Slot buffers").
 *
 * <p>Ownership: the slot holds one reference, and every copy handed out holds one more, which its
 * user releases as with any buffer (a write releases it once sent). So the buffer is refilled only
 * when its count is back to one; while a copy is still out, say a write waiting on a full socket,
 * the slot lets that copy have the buffer and takes a new one.
 */
final class SlotBuffer {
    private final int capacity;
    private ByteBuf buffer;

    /** @param capacity largest copy made in the kept buffer; 0 keeps none, so every copy is pooled */
    SlotBuffer(int capacity) {
        this.capacity = capacity;
    }

    /** The readable bytes of {@code src}, in a buffer whose one reference the caller owns. */
    ByteBuf copyOf(ByteBufAllocator alloc, ByteBuf src) {
        int n = src.readableBytes();
        if (n > capacity) {
            return alloc.directBuffer(n).writeBytes(src, src.readerIndex(), n);
        }
        if (buffer == null || buffer.refCnt() != 1) {
            if (buffer != null) {
                buffer.release(); // the copy still out frees it when done
            }
            buffer = alloc.directBuffer(capacity, capacity);
        }
        return buffer.clear().writeBytes(src, src.readerIndex(), n).retain();
    }

    /** Gives up the kept buffer; a copy still out keeps it alive until released. */
    void release() {
        if (buffer != null) {
            buffer.release();
            buffer = null;
        }
    }
}
