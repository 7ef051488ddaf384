package io.sluice.forward;

import io.netty.buffer.ByteBuf;
import io.sluice.pipeline.Route;
import io.sluice.pipeline.Stage;
import io.sluice.wire.QuestionCase;
import io.sluice.wire.ZoneTransfer;

/**
 * One client query waiting on upstreams: a reusable slot of its event loop's {@link Forwarder},
 * touched by that loop's thread only.
 */
final class PendingQuery {
    final int index;
    /** Bumped on every attempt and on release; a {@link DeadlineQueue} entry is live while equal. */
    int serial;

    /** Taken from the free stack and not yet released. */
    boolean inUse;

    /** The client's bytes, retained; the ID field holds the ID of the current attempt. */
    ByteBuf query;
    /** Where {@link #query} and the reply to the client are copied. */
    final SlotBuffer queryCopy;
    final SlotBuffer replyCopy;
    int questionEnd;
    int clientId;
    /** Where its answer goes: its client's route, or no one for a cache's prefetch. */
    Route route;
    /** The way back from the forward stage that handed it over. */
    Stage.Continuation back;
    /** The most a UDP answer to it may carry (Forwarder#udpLimit); 0 over a stream. */
    int udpLimit;

    /** The upstream index the query asks first (upstream-policy); its order goes on from there. */
    int firstUpstream;
    /** The position in that order of the next upstream to try: 0 for the first. */
    int nextUpstream;
    int attempts;
    boolean reconnected;
    Upstream upstream;
    UpstreamLink link;
    int upstreamId;
    long deadlineNanos;
    /** When this attempt left, for the upstream's latency. */
    long sentNanos;
    /** When the query arrived: all its attempts fit in query-timeout from here. */
    long startNanos;
    /** An AXFR or IXFR over TCP: many reply messages, read through {@link #transfer}. */
    boolean isTransfer;
    /** A transfer whose first message has been relayed: the rest follow under the same ID. */
    boolean transferring;
    /** Made for the first transfer this slot carries, then reused; null until then. */
    ZoneTransfer transfer;
    /** The letters of {@link #query}'s name flipped for this attempt, when {@link #caseScrambled}. */
    final long[] caseMask = new long[QuestionCase.MASK_WORDS];
    /** This attempt's name has a random case, which the reply must echo. */
    boolean caseScrambled;
    /** Its attempts send the name as the client wrote it (Forwarder#askInClientsCase). */
    boolean keepCase;
    /** This attempt had a reply that was right but for the name's case. */
    boolean caseMismatched;
    /** The loop's count of replies from {@link #upstream} when this attempt left. */
    long answersAtSend;
    /** What a stage noted of the query for what sees its answer (Query#answerNote). */
    long answerNote;

    PendingQuery(int index, int queryBytes, int replyBytes) {
        this.index = index;
        this.queryCopy = new SlotBuffer(queryBytes);
        this.replyCopy = new SlotBuffer(replyBytes);
    }
}
