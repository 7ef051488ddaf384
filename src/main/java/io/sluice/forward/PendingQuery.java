package io.sluice.forward;

import io.netty.buffer.ByteBuf;
import io.sluice.pipeline.Route;
import io.sluice.pipeline.Stage;
import io.sluice.transport.Transport;
import io.sluice.wire.ClientSubnet;
import io.sluice.wire.QueryView;
import io.sluice.wire.QuestionCase;
import io.sluice.wire.Replies;
import io.sluice.wire.Wire;
import io.sluice.wire.ZoneTransfer;

/**
 * One client query waiting on upstreams: a reusable slot of its event loop's {@link Forwarder},
 * touched by that loop's thread only. {@link #begin} sets every field a query starts with; the
 * rest belong to its current attempt, set as it is sent.
 */
final class PendingQuery {
    final int index;
    /** Bumped on every attempt and on release; a {@link DeadlineWheel} entry is live while equal. */
    int serial;
    /** Taken from the free stack and not yet released. */
    boolean inUse;
    /** Its deadline entry is live ({@link InFlightTable#arm}). */
    boolean armed;
    /** Where {@link #query} and the reply to the client are copied. */
    final SlotBuffer queryCopy;
    final SlotBuffer replyCopy;

    // The query, from begin to release.
    /** The client's bytes, from index 0; the ID field holds the current attempt's, the name its case. */
    ByteBuf query;
    int questionEnd;
    int clientId;
    /** Where its answer goes: its client's route, or no one for a cache's prefetch. */
    Route route;
    /** The way back from the forward stage that handed it over. */
    Stage.Continuation back;
    /** The most a UDP answer to it may carry ({@link UdpPayloadCap}); 0 over a stream. */
    int udpLimit;
    /**
     * Where its Client Subnet option is in {@link #query}, or -1; its OPT record's index; the
     * option's octets (code, length, data), which the reply of an upstream sent it must echo
     * ({@link #subnetAnswered}), and whether they are out of the query while an upstream not sent it is
     * asked (ecs.upstreams).
     */
    int subnetAt;
    int subnetOptAt;
    int subnetLength;
    boolean subnetOut;
    byte[] subnet;
    /** {@link #subnet}, as a buffer to read it with: made once, with it. */
    ByteBuf subnetOption;
    /** What a stage noted of the query for what sees its answer (Query#answerNote). */
    long answerNote;
    /** What the upstream gate gave it on entering, to hand back as it stops waiting (UpstreamGate#enter). */
    int gateTicket;
    /** When the query arrived: all its attempts fit in query-timeout from here. */
    long startNanos;
    /** The upstream index the query asks first (upstream-policy); its order goes on from there. */
    int firstUpstream;
    /** The position in that order of the next upstream to try: 0 for the first. */
    int nextUpstream;
    int attempts;
    /** It was asked again on a new connection after its healthy one closed: once only. */
    boolean reconnected;
    /** Its attempts send the name as the client wrote it (Forwarder#askInClientsCase). */
    boolean keepCase;
    /** An AXFR or IXFR over TCP: many reply messages ({@link TransferRelay}). */
    boolean isTransfer;
    /** A transfer whose first message has been relayed: the rest follow under the same ID. */
    boolean transferring;
    /** Made for the first transfer this slot carries, then reused; null until then. */
    ZoneTransfer transfer;

    /**
     * UDP attempts sent before the current one and still awaited (retransmit): a reply to any is
     * taken. Made when the slot first asks again, then kept: the slots are reused last freed first,
     * so few ever make them.
     */
    static final int MAX_EARLIER = 7;
    UpstreamLink[] earlierLinks;
    int[] earlierIds;
    long[] earlierSent;
    long[] earlierAnswersAtSend;
    int earlier;
    /** Attempts in a row whose retransmit timeout passed unanswered: each doubles the next one's wait. */
    int losses;
    /** No attempt more fits in query-timeout: its deadline is the query's end, which answers SERVFAIL. */
    boolean waitingOutLast;

    // The current attempt.
    Upstream upstream;
    UpstreamLink link;
    int upstreamId;
    long deadlineNanos;
    /** When this attempt left, for the upstream's latency. */
    long sentNanos;
    /** The loop's count of replies from {@link #upstream} when this attempt left. */
    long answersAtSend;
    /** The letters of {@link #query}'s name flipped for this attempt, when {@link #caseScrambled}. */
    final long[] caseMask = new long[QuestionCase.MASK_WORDS];
    /** This attempt's name has a random case, which the reply must echo ({@link CaseRandomizer}). */
    boolean caseScrambled;
    /** This attempt had a reply that was right but for the name's case. */
    boolean caseMismatched;

    PendingQuery(int index, int queryBytes, int replyBytes) {
        this.index = index;
        this.queryCopy = new SlotBuffer(queryBytes);
        this.replyCopy = new SlotBuffer(replyBytes);
    }

    /**
     * Starts the slot on the query {@code view} has read from {@code message}, copied: a datagram
     * lives in its loop's DatagramBuffer only until the next read.
     */
    void begin(ByteBuf message, QueryView view, Route route, Stage.Continuation back, long answerNote,
               int firstUpstream, long now) {
        this.query = queryCopy.copyOf(Transport.ALLOCATOR, message);
        this.questionEnd = view.questionEnd() - view.base(); // the copy starts at index 0
        this.clientId = view.id();
        this.route = route;
        this.back = back;
        this.udpLimit = 0;
        this.answerNote = answerNote;
        this.startNanos = now;
        this.firstUpstream = firstUpstream;
        this.nextUpstream = 0;
        this.attempts = 0;
        this.reconnected = false;
        this.keepCase = false;
        this.caseScrambled = false;
        this.earlier = 0;
        this.losses = 0;
        this.waitingOutLast = false;
        this.subnetAt = -1;
        TransferRelay.begins(this, message, view);
    }

    /** Sends the next attempt, the {@code position}-th upstream of its order, to {@code u} on {@code link} under {@code id}. */
    void attempt(int position, Upstream u, UpstreamLink link, int id, long answersFromUpstream, long now) {
        nextUpstream = position + 1;
        attempts++;
        upstream = u;
        this.link = link;
        upstreamId = id;
        answersAtSend = answersFromUpstream;
        sentNanos = now;
        query.setShort(query.readerIndex() + Wire.ID_OFFSET, id);
    }

    /**
     * Keeps the current attempt awaited while the next one is sent; past {@link #MAX_EARLIER}, the
     * oldest is given up (its ID released).
     */
    void keepAwaiting() {
        if (earlierLinks == null) {
            earlierLinks = new UpstreamLink[MAX_EARLIER];
            earlierIds = new int[MAX_EARLIER];
            earlierSent = new long[MAX_EARLIER];
            earlierAnswersAtSend = new long[MAX_EARLIER];
        }
        if (earlier == MAX_EARLIER) {
            earlierLinks[0].release(earlierIds[0]);
            dropEarlier(0);
        }
        earlierLinks[earlier] = link;
        earlierIds[earlier] = upstreamId;
        earlierSent[earlier] = sentNanos;
        earlierAnswersAtSend[earlier] = answersAtSend;
        earlier++;
    }

    /** Which earlier attempt left on {@code l} under {@code id}, or -1: the current one, or none. */
    int earlierAttempt(UpstreamLink l, int id) {
        for (int k = 0; k < earlier; k++) {
            if (earlierLinks[k] == l && earlierIds[k] == id) {
                return k;
            }
        }
        return -1;
    }

    /** Makes earlier attempt {@code k}, whose reply was taken, the current one; the current one becomes earlier. */
    void adopt(int k) {
        UpstreamLink l = earlierLinks[k];
        int id = earlierIds[k];
        long sent = earlierSent[k];
        long answers = earlierAnswersAtSend[k];
        earlierLinks[k] = link;
        earlierIds[k] = upstreamId;
        earlierSent[k] = sentNanos;
        earlierAnswersAtSend[k] = answersAtSend;
        link = l;
        upstream = l.upstream();
        upstreamId = id;
        sentNanos = sent;
        answersAtSend = answers;
    }

    /** Forgets earlier attempt {@code k}: its link lost it. */
    void dropEarlier(int k) {
        earlier--;
        System.arraycopy(earlierLinks, k + 1, earlierLinks, k, earlier - k);
        System.arraycopy(earlierIds, k + 1, earlierIds, k, earlier - k);
        System.arraycopy(earlierSent, k + 1, earlierSent, k, earlier - k);
        System.arraycopy(earlierAnswersAtSend, k + 1, earlierAnswersAtSend, k, earlier - k);
        earlierLinks[earlier] = null;
    }

    /** Releases the IDs of the earlier attempts: the query is answered, given up, or asked anew. */
    void releaseEarlier() {
        for (int k = 0; k < earlier; k++) {
            earlierLinks[k].release(earlierIds[k]);
            earlierLinks[k] = null;
        }
        earlier = 0;
    }

    /**
     * Whether {@code reply}, from {@code from}, answers one of the attempts (or continues its
     * transfer): its question the query's, in the letters sent (the attempts awaited together all
     * sent the same: a retry that goes back to the client's letters gives up those before it). One right but for the letters is noted
     * ({@link #caseMismatched}), the evidence {@link CaseRandomizer} judges an upstream by.
     */
    boolean accepts(ByteBuf reply, Upstream from, ForwardMeters meters) {
        int base = query.readerIndex();
        if (transferring ? Replies.continuesTransfer(query, base, questionEnd, reply)
                : Replies.answers(query, base, questionEnd, reply, caseScrambled)) {
            return true;
        }
        meters.repliesRejected[from.index()].increment();
        if (caseScrambled && Replies.answers(query, base, questionEnd, reply, false)) {
            meters.caseMismatched.increment();
            caseMismatched = true;
        } else {
            meters.repliesMismatched.increment();
        }
        return false;
    }

    /**
     * Whether {@code reply}, which {@link #accepts}, carries no Client Subnet or the query's, when
     * {@code from} was sent it (RFC 7871 section 7.3, {@link ClientSubnet#answers}), whichever
     * upstream the latest attempt went to; one that does not is counted as a mismatched reply.
     */
    boolean subnetAnswered(ByteBuf reply, Upstream from, ForwardMeters meters) {
        if (subnetAt < 0 || !from.sentClientSubnet() || ClientSubnet.answers(subnetOption, 0, reply)) {
            return true;
        }
        meters.repliesRejected[from.index()].increment();
        meters.repliesMismatched.increment();
        return false;
    }

    /** Asks the upstream of the attempt that just ended again, as if that attempt had not been made. */
    void askAgain() {
        nextUpstream--;
        attempts--;
    }
}
