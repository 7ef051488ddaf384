package io.sluice.forward;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * Where a loop's {@link Forwarder} hands the upstreams' answers, and where it looks for one when
 * no upstream answered: an answer cache, which the forwarder knows only as this. Called on the
 * loop; both buffers are valid only during the call.
 */
public interface AnswerStore {
    /** Keeps nothing and has nothing. */
    AnswerStore NONE = new AnswerStore() {
        @Override
        public void answered(ByteBuf query, ByteBuf reply) {
        }

        @Override
        public ByteBuf unanswered(ByteBufAllocator alloc, ByteBuf query, boolean overUdp) {
            return null;
        }
    };

    /**
     * An upstream answered {@code query}; {@code reply}, in the client's letter case and with its
     * ID, is about to be relayed. The query's ID and case are the attempt's.
     */
    void answered(ByteBuf query, ByteBuf reply);

    /**
     * No upstream answered {@code query} (its ID and case the client's): an answer to send instead
     * of SERVFAIL, whose reference the caller takes, or null.
     */
    ByteBuf unanswered(ByteBufAllocator alloc, ByteBuf query, boolean overUdp);
}
