package io.sluice.forward;

import io.netty.buffer.ByteBuf;
import io.sluice.pipeline.Answer;
import io.sluice.pipeline.Route;
import io.sluice.pipeline.Stage;
import io.sluice.transport.Transport;
import io.sluice.wire.Answers;
import io.sluice.wire.QueryView;
import io.sluice.wire.Replies;
import io.sluice.wire.TcpKeepalive;
import io.sluice.wire.Wire;

/**
 * What one loop's forwarder sends back to clients, each through its query's way back (the forward
 * stage's continuation: the stages' answer sides, then the route): an upstream's answer, or
 * sluice's SERVFAIL, which an answer side may replace; to a query and to each query joined to it
 * ({@link Coalescing}) alike, each with its own ID and letters. On the way back the query is as
 * its client sent it, so that an answer side that answers in its place (the cache) answers the
 * client's question. Confined to its loop; the slot stays taken, for the forwarder to free.
 */
final class ClientAnswers {
    private static final byte[] SERVFAIL_TEXT = Answers.text("sluice: no upstream answered");
    private static final byte[] INFLIGHT_TEXT = Answers.text("sluice: too many queries in flight");
    private static final byte[] GATE_TEXT = Answers.text("sluice: too many queries waiting for this domain");

    private final ForwardMeters meters;
    private final CaseRandomizer caseRandomizer;
    private final Coalescing coalescing;
    /** {@code tcp-idle-timeout} as an edns-tcp-keepalive TIMEOUT, for the answers relayed over a stream. */
    private final int keepaliveTimeout;
    /** The reading of the query on its way back. */
    private final QueryView view = new QueryView();
    private final Answer answer = new Answer();

    ClientAnswers(ForwardMeters meters, CaseRandomizer caseRandomizer, Coalescing coalescing, int keepaliveTimeout) {
        this.meters = meters;
        this.caseRandomizer = caseRandomizer;
        this.coalescing = coalescing;
        this.keepaliveTimeout = keepaliveTimeout;
    }

    /**
     * Relays {@code reply}, an upstream's accepted answer to {@code q} in its client's letters and
     * with its client's ID, which may be a datagram's: it is copied.
     */
    void relay(PendingQuery q, ByteBuf reply) {
        Coalescing.Waiter joined = coalescing.end(q);
        asClientSent(q);
        boolean questionMissing = Replies.questionMissing(reply);
        relay(q.query, q.route, q.back, q.answerNote, q.udpLimit, questionMissing ? errorWithQuestion(q.query, reply)
                : q.replyCopy.copyOf(Transport.ALLOCATOR, reply), Answer.Source.UPSTREAM);
        Coalescing.Waiter w = joined;
        try {
            for (; w != null; w = coalescing.answered(w)) {
                view.read(w.query);
                relay(w.query, w.route, w.back, w.answerNote, w.udpLimit,
                        questionMissing ? errorWithQuestion(w.query, reply) : shared(w.query, reply), Answer.Source.SHARED);
            }
        } finally {
            unanswered(w);
        }
    }

    /**
     * Answers {@code q} SERVFAIL, and each query joined to it, unless an answer side has an answer
     * to send instead (the cache: a fresh answer kept while it waited, or a stale one).
     *
     * @param upstreamsFailed whether the upstreams failed the query (not: it could not be sent)
     */
    void servfail(PendingQuery q, boolean upstreamsFailed) {
        Coalescing.Waiter joined = coalescing.end(q);
        Answer.Source source = upstreamsFailed ? Answer.Source.UPSTREAMS_FAILED : Answer.Source.NOT_FORWARDED;
        asClientSent(q);
        servfail(q.query, q.route, q.back, q.answerNote, q.udpLimit, source);
        Coalescing.Waiter w = joined;
        try {
            for (; w != null; w = coalescing.answered(w)) {
                view.read(w.query);
                servfail(w.query, w.route, w.back, w.answerNote, w.udpLimit, source);
            }
        } finally {
            unanswered(w);
        }
    }

    /**
     * Answers the query {@code view} read from {@code query}, which no slot was free for
     * ({@code max-inflight}), SERVFAIL, unless an answer side has an answer to send instead, as
     * when no upstream answered.
     */
    void inflightFull(ByteBuf query, QueryView view, Route route, long note, Stage.Continuation back) {
        meters.inflightFull.increment();
        ByteBuf servfail = Answers.withQuestion(Transport.ALLOCATOR, query, view, Wire.FLAG_RA, Wire.RCODE_SERVFAIL,
                Answers.EDE_OTHER, INFLIGHT_TEXT);
        if (back.back(answer.fill(query, view, route, note, servfail, Answer.Source.NOT_FORWARDED))
                == Answer.Source.NOT_FORWARDED) {
            meters.servfail.increment();
        }
    }

    /**
     * Answers the query {@code view} read from {@code query}, which its domain's bound on queries
     * waiting kept from being sent ({@link io.sluice.pipeline.UpstreamGate}), SERVFAIL with Extended
     * DNS Error 22 (no reachable authority) at once, unless an answer side has an answer to send
     * instead (the cache's, stale or not).
     */
    void gateClosed(ByteBuf query, QueryView view, Route route, long note, Stage.Continuation back) {
        ByteBuf servfail = Answers.withQuestion(Transport.ALLOCATOR, query, view, Wire.FLAG_RA, Wire.RCODE_SERVFAIL,
                Answers.EDE_NO_REACHABLE_AUTHORITY, GATE_TEXT);
        if (back.back(answer.fill(query, view, route, note, servfail, Answer.Source.GATE_CLOSED))
                == Answer.Source.GATE_CLOSED) {
            meters.servfail.increment();
        }
    }

    /**
     * An upstream's error header that counts a question it lacks ({@link Replies#questionMissing}),
     * for the client of {@code query} (as the client sent it, read into {@link #view}): that
     * error, with the client's question.
     */
    private ByteBuf errorWithQuestion(ByteBuf query, ByteBuf reply) {
        return Answers.underUpstreamHeader(Transport.ALLOCATOR, query, view, reply, false);
    }

    /**
     * A copy of {@code reply}, the answer to an identical query, for the query joined to it
     * {@code query} (read into {@link #view}): its ID, and its question's name in its client's
     * letters (the same octets but for case, as their keys are one).
     */
    private ByteBuf shared(ByteBuf query, ByteBuf reply) {
        ByteBuf copy = Transport.ALLOCATOR.buffer(reply.readableBytes())
                .writeBytes(reply, reply.readerIndex(), reply.readableBytes());
        copy.setShort(Wire.ID_OFFSET, view.id());
        if (copy.getUnsignedShort(Wire.QDCOUNT_OFFSET) == 1) {
            copy.setBytes(Wire.HEADER_BYTES, query, view.nameStart(), view.nameEnd() - view.nameStart());
        }
        return copy;
    }

    /** Puts the client's ID and letters back in {@code q}'s query, and reads it into {@link #view}. */
    private void asClientSent(PendingQuery q) {
        caseRandomizer.restore(q);
        q.query.setShort(q.query.readerIndex() + Wire.ID_OFFSET, q.clientId);
        view.read(q.query);
    }

    /**
     * Sends {@code message}, an upstream's answer to the query {@link #view} reads from
     * {@code query}, back by {@code back} to {@code route}, with sluice's edns-tcp-keepalive over a
     * connection (hop by hop, not the upstream's); counted as relayed when it left as it was.
     */
    private void relay(ByteBuf query, Route route, Stage.Continuation back, long note, int udpLimit,
                       ByteBuf message, Answer.Source source) {
        if (route.connection() != null) {
            TcpKeepalive.setTimeout(message, keepaliveTimeout);
        }
        if (back.back(answer.fill(query, view, route, note, message, source).udpLimit(udpLimit)) == source
                && route.answersSomebody()) {
            meters.answered.increment();
        }
    }

    /** Answers the query {@link #view} reads from {@code query} SERVFAIL, as {@code source} made it, unless an answer side has another. */
    private void servfail(ByteBuf query, Route route, Stage.Continuation back, long note, int udpLimit,
                          Answer.Source source) {
        ByteBuf servfail = Answers.withQuestion(Transport.ALLOCATOR, query, view, Wire.FLAG_RA, Wire.RCODE_SERVFAIL,
                Answers.EDE_NO_REACHABLE_AUTHORITY, SERVFAIL_TEXT);
        if (back.back(answer.fill(query, view, route, note, servfail, source).udpLimit(udpLimit)) == source) {
            meters.servfail.increment();
        }
    }

    /** Gives up the joined queries from {@code w} on, unanswered: a bug on the way back cost them their answers, never their buffers. */
    private void unanswered(Coalescing.Waiter w) {
        while (w != null) {
            w.route.dropped(w.query);
            w = coalescing.answered(w);
        }
    }
}
