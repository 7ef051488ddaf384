package io.sluice.pipeline;

import io.netty.buffer.ByteBuf;

/**
 * A copy of a query that a stage keeps while it waits (say, for Redis), its route back, and what
 * the stages before noted of it ({@link Query#answerNote}, {@link Query#domainHash}). Whoever holds
 * it releases it once it is resumed or given up.
 */
public record ParkedQuery(ByteBuf message, Route route, boolean answersNobody, long answerNote, long domainHash) {
    public void release() {
        message.release();
    }
}
