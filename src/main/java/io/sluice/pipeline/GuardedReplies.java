package io.sluice.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.wire.QueryView;

/**
 * One of what sees a loop's upstream answers (the cache, the flood watch), kept from breaking the
 * forwarder and the others. An exception out of it (a bug, met by an answer no test had) would
 * leave that answer unsent and its copy unreleased (a leak per answer), the others blind to it,
 * and the query would wait out its deadline, be asked of the next upstream, and end in SERVFAIL.
 * Here it is counted and logged ({@link InternalErrors}), and the forwarder goes on as if this one
 * had not seen the answer: it is relayed, and an unanswered query gets its SERVFAIL or another's answer.
 */
public final class GuardedReplies implements UpstreamReplies {
    private final UpstreamReplies replies;
    private final InternalErrors errors;

    GuardedReplies(UpstreamReplies replies, InternalErrors errors) {
        this.replies = replies;
        this.errors = errors;
    }

    /** {@code replies} guarded, or {@link UpstreamReplies#NONE} itself: nothing to guard. */
    public static UpstreamReplies of(UpstreamReplies replies, InternalErrors errors) {
        return replies == NONE ? NONE : new GuardedReplies(replies, errors);
    }

    @Override
    public void answered(ByteBuf query, QueryView view, boolean overUdp, ByteBuf reply, long note) {
        try {
            replies.answered(query, view, overUdp, reply, note);
        } catch (RuntimeException e) {
            failed("an upstream's answer", e);
        }
    }

    @Override
    public ByteBuf unanswered(ByteBufAllocator alloc, ByteBuf query, QueryView view, boolean overUdp,
                              boolean refreshFailed) {
        try {
            return replies.unanswered(alloc, query, view, overUdp, refreshFailed);
        } catch (RuntimeException e) {
            failed("a query no upstream answered", e);
            return null;
        }
    }

    private void failed(String what, RuntimeException e) {
        errors.caught(InternalErrors.nameOf(replies), what, "the query goes on without it", e);
    }
}
