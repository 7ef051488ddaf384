package io.sluice.pipeline;

import io.netty.buffer.ByteBuf;
import io.sluice.wire.QueryView;

/**
 * An answer on its way back to a client: what it answers, who made it, and where it goes. Every
 * answer to a query travels back as one, through the answer sides of the stages before the one
 * that made it, nearest first ({@link AnswerSide}), and leaves through its {@link Route} once.
 * One per maker and loop, refilled for each answer: no object per answer. Valid only during the
 * way back; its buffers too.
 */
public final class Answer {
    /** Who made an answer: what the answer sides judge it by, and the {@code source} it is counted under. */
    public enum Source {
        /** An upstream's reply, relayed. */
        UPSTREAM,
        /**
         * An upstream's reply to an identical query that this one joined (coalescing), relayed as
         * this one's: counted once, as that query's, by what counts the upstreams' answers.
         */
        SHARED,
        /** The answer cache's, fresh or stale. */
        CACHE,
        /** One of sluice's own: a refusal, FORMERR, NOTIMP. */
        SLUICE,
        /**
         * sluice's answer to a query over a budget: the limit's action (a refusal, NXDOMAIN, TC, or
         * for a drop no message at all), in whose place a stale answer may go.
         */
        OVER_BUDGET,
        /** sluice's SERVFAIL: the upstreams were asked and none answered in time. */
        UPSTREAMS_FAILED,
        /** sluice's SERVFAIL: no upstream could be asked (max-inflight full, the ID space of a link full). */
        NOT_FORWARDED,
        /**
         * sluice's SERVFAIL for a query not sent because its domain had as many queries waiting on
         * upstreams as it may ({@link UpstreamGate}), in whose place a stale answer may go.
         */
        GATE_CLOSED
    }

    /** Told, once the answer sides are done, who made the answer about to leave: before it leaves. */
    @FunctionalInterface
    public interface Leaving {
        void leaving(Source source);
    }

    private ByteBuf query;
    private QueryView view;
    private Route route;
    private long note;
    private ByteBuf message;
    private Source source;
    private int udpLimit;

    /**
     * Fills this with an answer to go back.
     *
     * @param query   the query as its client sent it (its ID and letter case), read by {@code view}
     * @param note    what a stage noted of the query ({@link Query#answerNote})
     * @param message the answer, whose reference the way back takes; null for none (a query over
     *                its budget dropped), which an answer side may still put one in the place of
     * @return this
     */
    public Answer fill(ByteBuf query, QueryView view, Route route, long note, ByteBuf message, Source source) {
        this.query = query;
        this.view = view;
        this.route = route;
        this.note = note;
        this.message = message;
        this.source = source;
        this.udpLimit = 0;
        return this;
    }

    /**
     * The most the answer may carry to a UDP client, past which it leaves cut to its header and
     * question with TC set: an upstream's answer is seen whole on the way back (the cache keeps it
     * so) and cut only as it leaves. 0: it is not cut.
     */
    public Answer udpLimit(int bytes) {
        this.udpLimit = bytes;
        return this;
    }

    public int udpLimit() {
        return udpLimit;
    }

    /** The query answered, with its client's ID and letter case. */
    public ByteBuf query() {
        return query;
    }

    /** The reading of {@link #query}. */
    public QueryView view() {
        return view;
    }

    public Route route() {
        return route;
    }

    /** Whether the query came in a datagram: for the payload size it offers. */
    public boolean datagram() {
        return route.datagram();
    }

    /** What a stage noted of the query, or {@link Query#NO_NOTE}. */
    public long note() {
        return note;
    }

    /** The answer as it stands; null for none: a dropped query's, which leaves nothing. */
    public ByteBuf message() {
        return message;
    }

    public Source source() {
        return source;
    }

    /**
     * Puts {@code instead} (whose reference this takes) in the answer's place, made by
     * {@code by}; the answer it replaces is released. The stages nearer the client see the new one.
     */
    public void replace(ByteBuf instead, Source by) {
        if (message != null) {
            message.release();
        }
        message = instead;
        source = by;
    }

    /**
     * Puts {@code changed}, the message as an answer side rewrote it (the same buffer, or a new one
     * whose reference this takes), in its place. One that grew past what its datagram client takes
     * ({@code clientUdpLimit}, or the limit its maker set) leaves cut to its header and question,
     * with TC set.
     */
    public void rewritten(ByteBuf changed, int clientUdpLimit) {
        if (changed != message) {
            replace(changed, source);
        }
        int limit = udpLimit != 0 ? udpLimit : clientUdpLimit;
        if (route.datagram() && changed.readableBytes() > limit) {
            udpLimit = limit;
        }
    }

    /** Takes the message out: the way back is done with it. */
    ByteBuf take() {
        ByteBuf m = message;
        message = null;
        query = null;
        view = null;
        route = null;
        return m;
    }
}
