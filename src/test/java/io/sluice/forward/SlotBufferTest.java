package io.sluice.forward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The kept buffer is refilled only once every copy handed out has been released. */
class SlotBufferTest {
    private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;

    private static ByteBuf bytes(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.US_ASCII);
    }

    private static String text(ByteBuf b) {
        return b.toString(StandardCharsets.US_ASCII);
    }

    /** Releases the last copy out and the slot's own reference: the kept buffer is then freed. */
    private static void assertFreedWhenBothLetGo(SlotBuffer slot, ByteBuf copy) {
        copy.release();
        slot.release();
        assertEquals(0, copy.refCnt());
    }

    @Test
    void aReleasedCopyIsRefilledInPlace() {
        SlotBuffer slot = new SlotBuffer(16);
        ByteBuf first = slot.copyOf(alloc, bytes("first query"));
        assertEquals("first query", text(first));
        first.release();

        ByteBuf second = slot.copyOf(alloc, bytes("second"));
        assertSame(first, second);
        assertEquals("second", text(second));
        assertFreedWhenBothLetGo(slot, second);
    }

    @Test
    void aCopyStillOutIsNeverOverwritten() {
        SlotBuffer slot = new SlotBuffer(16);
        ByteBuf queued = slot.copyOf(alloc, bytes("queued reply"));

        ByteBuf next = slot.copyOf(alloc, bytes("next reply"));
        assertNotSame(queued, next);
        assertEquals("queued reply", text(queued));
        assertEquals("next reply", text(next));

        queued.release(); // the write that held it is done: the slot gave it up, so it is freed
        assertEquals(0, queued.refCnt());
        assertFreedWhenBothLetGo(slot, next);
    }

    @Test
    void aCopyLargerThanTheSlotTakesItsOwnBuffer() {
        SlotBuffer slot = new SlotBuffer(4);
        ByteBuf src = bytes("longer than four");
        ByteBuf copy = slot.copyOf(alloc, src);
        assertEquals(ByteBufUtil.hexDump(src), ByteBufUtil.hexDump(copy));
        assertEquals(0, src.readerIndex(), "the source is left as it was");
        copy.release();
        assertEquals(0, copy.refCnt());
        slot.release();
    }

    @Test
    void withoutCapacityEveryCopyIsPooled() {
        SlotBuffer slot = new SlotBuffer(0);
        ByteBuf a = slot.copyOf(alloc, bytes("a"));
        ByteBuf b = slot.copyOf(alloc, bytes("b"));
        assertNotSame(a, b);
        a.release();
        b.release();
        assertEquals(0, a.refCnt());
        assertEquals(0, b.refCnt());
    }
}
