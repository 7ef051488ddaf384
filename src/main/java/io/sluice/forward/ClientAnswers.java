package io.sluice.forward;

import io.netty.buffer.ByteBuf;
import io.sluice.pipeline.Answer;
import io.sluice.pipeline.Route;
import io.sluice.pipeline.Stage;
import io.sluice.transport.Transport;
import io.sluice.wire.Answers;
import io.sluice.wire.ClientSubnet;
import io.sluice.wire.QueryView;
import io.sluice.wire.Replies;
import io.sluice.wire.TcpKeepalive;
import io.sluice.wire.Wire;

/**
 * What one loop's forwarder sends back to clients, each through its query's way back (the forward
 * stage's continuation: the stages' answer sides, then the route): an upstream's answer, or
 * sluice's SERVFAIL, which an answer side may replace. On the way back the query is as its client sent it, ID and letters, so that
 * an answer side that answers in its place (the cache) answers the client's question. Confined to
 * its loop; the slot stays taken, for the forwarder to free.
 */
final class ClientAnswers {
    private static final byte[] SERVFAIL_TEXT = Answers.text("sluice: no upstream answered");
    private static final byte[] INFLIGHT_TEXT = Answers.text("sluice: too many queries in flight");
    private static final byte[] GATE_TEXT = Answers.text("sluice: too many queries waiting for this domain");

    private final ForwardMeters meters;
    private final CaseRandomizer caseRandomizer;
    /** {@code tcp-idle-timeout} as an edns-tcp-keepalive TIMEOUT, for the answers relayed over a stream. */
    private final int keepaliveTimeout;
    /** The reading of the query on its way back. */
    private final QueryView view = new QueryView();
    private final Answer answer = new Answer();

    ClientAnswers(ForwardMeters meters, CaseRandomizer caseRandomizer, int keepaliveTimeout) {
        this.meters = meters;
        this.caseRandomizer = caseRandomizer;
        this.keepaliveTimeout = keepaliveTimeout;
    }

    /**
     * Relays {@code reply}, an upstream's accepted answer to {@code q} in its client's letters and
     * with its client's ID, which may be a datagram's: it is copied.
     */
    void relay(PendingQuery q, ByteBuf reply) {
        asClientSent(q);
        ByteBuf copy = Replies.questionMissing(reply) ? errorWithQuestion(q, reply)
                : q.replyCopy.copyOf(Transport.ALLOCATOR, reply);
        if (q.route.connection() != null) {
            TcpKeepalive.setTimeout(copy, keepaliveTimeout); // hop by hop: sluice's, not the upstream's
        }
        if (back(q, copy, Answer.Source.UPSTREAM) == Answer.Source.UPSTREAM && q.route.answersSomebody()) {
            meters.answered.increment();
        }
    }

    /**
     * Answers {@code q} SERVFAIL, unless an answer side has an answer to send instead (the cache: a
     * fresh answer kept while it waited, or a stale one).
     *
     * @param upstreamsFailed whether the upstreams failed the query (not: it could not be sent)
     */
    void servfail(PendingQuery q, boolean upstreamsFailed) {
        Answer.Source source = upstreamsFailed ? Answer.Source.UPSTREAMS_FAILED : Answer.Source.NOT_FORWARDED;
        asClientSent(q);
        ByteBuf servfail = Answers.withQuestion(Transport.ALLOCATOR, q.query, view, Wire.FLAG_RA,
                Wire.RCODE_SERVFAIL, Answers.EDE_NO_REACHABLE_AUTHORITY, SERVFAIL_TEXT);
        if (back(q, servfail, source) == source) {
            meters.servfail.increment();
        }
    }

    /**
     * Answers the query {@code view} read from {@code query}, which no slot was free for
     * ({@code max-inflight}), SERVFAIL, unless an answer side has an answer to send instead, as
     * when no upstream answered.
     */
    void inflightFull(ByteBuf query, QueryView view, Route route, long note, Stage.Continuation back) {
        meters.inflightFull.increment();
        notSent(query, view, route, note, back, Answers.EDE_OTHER, INFLIGHT_TEXT, Answer.Source.NOT_FORWARDED);
    }

    /**
     * Answers the query {@code view} read from {@code query}, which its domain's bound on queries
     * waiting kept from being sent ({@link io.sluice.pipeline.UpstreamGate}), SERVFAIL with Extended
     * DNS Error 22 (no reachable authority) at once, unless an answer side has an answer to send
     * instead (the cache's, stale or not).
     */
    void gateClosed(ByteBuf query, QueryView view, Route route, long note, Stage.Continuation back) {
        notSent(query, view, route, note, back, Answers.EDE_NO_REACHABLE_AUTHORITY, GATE_TEXT,
                Answer.Source.GATE_CLOSED);
    }

    /** sluice's SERVFAIL, made by {@code source}, for a query not sent: back by {@code back}, counted when it leaves so. */
    private void notSent(ByteBuf query, QueryView view, Route route, long note, Stage.Continuation back, int edeCode,
                         byte[] text, Answer.Source source) {
        ByteBuf servfail = Answers.withQuestion(Transport.ALLOCATOR, query, view, Wire.FLAG_RA, Wire.RCODE_SERVFAIL,
                edeCode, text);
        if (back.back(answer.fill(query, view, route, note, servfail, source)) == source) {
            meters.servfail.increment();
        }
    }

    /**
     * An upstream's error header that counts a question it lacks ({@link Replies#questionMissing}),
     * for the client of {@code q} (its query as the client sent it, read): that error, with the
     * client's question.
     */
    private ByteBuf errorWithQuestion(PendingQuery q, ByteBuf reply) {
        return Answers.underUpstreamHeader(Transport.ALLOCATOR, q.query, view, reply, false);
    }

    /** Puts the client's ID and letters back in {@code q}'s query, and reads it into {@link #view}. */
    private void asClientSent(PendingQuery q) {
        caseRandomizer.restore(q);
        if (q.subnetOut) { // taken out for an upstream not sent Client Subnet: the cache keys the query with it
            ClientSubnet.insertAt(q.query, q.subnetOptAt, q.subnetAt, q.subnet, q.subnetLength);
            q.subnetOut = false;
        }
        q.query.setShort(q.query.readerIndex() + Wire.ID_OFFSET, q.clientId);
        view.read(q.query);
    }

    /**
     * Sends {@code message} back to the client of {@code q}, whose query is as its client sent it
     * ({@link #asClientSent}).
     *
     * @return who made the answer that left
     */
    private Answer.Source back(PendingQuery q, ByteBuf message, Answer.Source source) {
        return q.back.back(answer.fill(q.query, view, q.route, q.answerNote, message, source).udpLimit(q.udpLimit));
    }
}
