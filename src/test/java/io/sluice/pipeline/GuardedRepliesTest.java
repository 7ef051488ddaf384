package io.sluice.pipeline;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.sluice.wire.QueryView;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/** An exception out of what sees the answers is counted, and the forwarder goes on as if nothing had seen them. */
class GuardedRepliesTest {
    /** Fails on everything, as a bug in the cache would on the answer that finds it. */
    private static final UpstreamReplies BROKEN = new UpstreamReplies() {
        @Override
        public void answered(ByteBuf query, QueryView view, boolean overUdp, ByteBuf reply, long note) {
            throw new IndexOutOfBoundsException("a reply no test had");
        }

        @Override
        public ByteBuf unanswered(ByteBufAllocator alloc, ByteBuf query, QueryView view, boolean overUdp,
                                  boolean refreshFailed) {
            throw new IllegalStateException("a stale entry no test had");
        }
    };

    @Test
    void aFailureIsCountedAndTheQueryGoesOnWithoutIt() {
        LongAdder failures = new LongAdder();
        UpstreamReplies guarded = GuardedReplies.of(BROKEN, new InternalErrors(failures));
        ByteBuf b = Unpooled.buffer(12);
        assertDoesNotThrow(() -> guarded.answered(b, new QueryView(), true, b, UpstreamReplies.NO_NOTE));
        assertNull(guarded.unanswered(ByteBufAllocator.DEFAULT, b, new QueryView(), true, true),
                "no answer instead: the forwarder sends its SERVFAIL");
        assertEquals(2, failures.sum());
    }

    @Test
    void aBrokenOneDoesNotBlindTheNext() {
        LongAdder failures = new LongAdder();
        LongAdder seen = new LongAdder();
        UpstreamReplies counting = (query, view, overUdp, reply, note) -> seen.increment();
        UpstreamReplies both = UpstreamReplies.of(java.util.List.of(GuardedReplies.of(BROKEN, new InternalErrors(failures)),
                GuardedReplies.of(counting, new InternalErrors(failures))));
        ByteBuf b = Unpooled.buffer(12);
        both.answered(b, new QueryView(), true, b, UpstreamReplies.NO_NOTE);
        assertEquals(1, seen.sum(), "the flood watch still sees what the cache failed on");
        assertEquals(1, failures.sum());
    }

    @Test
    void whatWorksPassesThrough() {
        ByteBuf stale = Unpooled.buffer(12);
        LongAdder seen = new LongAdder();
        UpstreamReplies stales = new UpstreamReplies() {
            @Override
            public void answered(ByteBuf query, QueryView view, boolean overUdp, ByteBuf reply, long note) {
                seen.increment();
            }

            @Override
            public ByteBuf unanswered(ByteBufAllocator alloc, ByteBuf query, QueryView view, boolean overUdp,
                                      boolean refreshFailed) {
                return stale;
            }
        };
        LongAdder failures = new LongAdder();
        UpstreamReplies guarded = GuardedReplies.of(stales, new InternalErrors(failures));
        guarded.answered(stale, new QueryView(), true, stale, UpstreamReplies.NO_NOTE);
        assertEquals(1, seen.sum(), "the answer is passed on");
        assertSame(stale, guarded.unanswered(ByteBufAllocator.DEFAULT, stale, new QueryView(), true, true));
        assertSame(UpstreamReplies.NONE, GuardedReplies.of(UpstreamReplies.NONE, new InternalErrors(failures)),
                "nothing to guard: the forwarder still sees that nothing sees its answers");
        assertEquals(0, failures.sum());
    }
}
