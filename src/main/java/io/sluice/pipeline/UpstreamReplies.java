package io.sluice.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.wire.QueryView;
import java.util.List;

/**
 * A stage's answer side ({@link Stage#answers}): a loop's forwarder hands each answer it relays to
 * the stages' answer sides, the last stage's first, and asks them for an answer when no upstream
 * answered. The answer cache keeps the answers and has stale ones; the limit stage's flood watch
 * counts the NXDOMAINs. The forwarder knows them only as this. Called on the loop; the buffers, and the forwarder's one reading of the query that
 * {@code view} holds, are valid only during the call.
 */
public interface UpstreamReplies {
    /** A query no stage left a note for ({@link Query#answerNote}). */
    long NO_NOTE = -1;

    /** Sees nothing and has nothing. */
    UpstreamReplies NONE = new UpstreamReplies() {
        @Override
        public void answered(ByteBuf query, QueryView view, boolean overUdp, ByteBuf reply, long note) {
        }
    };

    /**
     * An upstream answered {@code query}, asked as over UDP ({@code overUdp}: for the payload size
     * it offers) or as over TCP; {@code reply}, in the client's letter case and with its ID, is
     * about to be relayed. The query's ID and case are the attempt's; {@code note} is what a stage
     * noted of it ({@link Query#answerNote}).
     */
    void answered(ByteBuf query, QueryView view, boolean overUdp, ByteBuf reply, long note);

    /**
     * No upstream gave {@code query} (its ID and case the client's) an answer: none answered in
     * time, one answered SERVFAIL, or none could be asked (max-inflight full). An answer to send
     * instead of SERVFAIL, whose reference the caller takes, or null.
     *
     * @param refreshFailed whether upstreams were asked and failed (not: none could be asked)
     */
    default ByteBuf unanswered(ByteBufAllocator alloc, ByteBuf query, QueryView view, boolean overUdp,
                               boolean refreshFailed) {
        return null;
    }

    /** Each of {@code all} in order sees every answer; the first with an answer for an unanswered query gives it. */
    static UpstreamReplies of(List<UpstreamReplies> all) {
        if (all.isEmpty()) {
            return NONE;
        }
        if (all.size() == 1) {
            return all.get(0);
        }
        UpstreamReplies[] each = all.toArray(new UpstreamReplies[0]);
        return new UpstreamReplies() {
            @Override
            public void answered(ByteBuf query, QueryView view, boolean overUdp, ByteBuf reply, long note) {
                for (UpstreamReplies r : each) {
                    r.answered(query, view, overUdp, reply, note);
                }
            }

            @Override
            public ByteBuf unanswered(ByteBufAllocator alloc, ByteBuf query, QueryView view, boolean overUdp,
                                      boolean refreshFailed) {
                for (UpstreamReplies r : each) {
                    ByteBuf a = r.unanswered(alloc, query, view, overUdp, refreshFailed);
                    if (a != null) {
                        return a;
                    }
                }
                return null;
            }
        };
    }
}
