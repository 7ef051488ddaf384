package io.sluice.pipeline;

import io.netty.buffer.ByteBuf;
import io.sluice.transport.Transport;
import io.sluice.wire.Answers;
import io.sluice.wire.QueryView;
import java.net.InetAddress;
import java.util.function.LongSupplier;

/**
 * The query a pipeline is running: its message, what the first stage read of it, and its route
 * back. One per pipeline (and one more for resumed queries), refilled for every message: no object
 * per query. Valid only while the stages run; a stage that keeps a query keeps a {@link #park() copy}.
 */
public final class Query {
    /** A query no stage left a note for ({@link #answerNote}). */
    public static final long NO_NOTE = -1;

    private final QueryView view = new QueryView();
    private final Pipeline pipeline;
    private final LongSupplier clock;
    private ByteBuf message;
    private Route route;
    /** Its answers go to no one: a cache's prefetch, answered from the cache already. */
    private boolean answersNobody;
    private long now;
    private boolean timed;
    private long answerNote;
    private long domainHash;
    /** The stage running it now: where an answer it makes starts back from. */
    private int stage;

    Query(Pipeline pipeline, LongSupplier clock) {
        this.pipeline = pipeline;
        this.clock = clock;
    }

    void set(ByteBuf message, Route route) {
        this.message = message;
        this.route = route;
        this.answersNobody = false;
        this.timed = false;
        this.answerNote = NO_NOTE;
        this.domainHash = 0;
    }

    void atStage(int stage) {
        this.stage = stage;
    }

    /**
     * The query's time on the limiters' clock (epoch nanoseconds), read when a stage first asks:
     * the cache and the limits then judge it at one instant, and a query pays one clock read
     * (docs/benchmarks.md, "Decision (JMH)").
     */
    public long now() {
        if (!timed) {
            now = clock.getAsLong();
            timed = true;
        }
        return now;
    }

    /**
     * What a stage noted of this query for what sees the answer to it ({@link Answer#note}),
     * carried with the query by the forwarder, which knows nothing of it, and with a parked copy;
     * {@link #NO_NOTE} unless a stage set it.
     */
    public long answerNote() {
        return answerNote;
    }

    public void answerNote(long note) {
        answerNote = note;
    }

    /**
     * The keyed hash of its registrable domain, put on it by the limits for what bounds a domain
     * after them ({@link UpstreamGate}); 0, unless they did: no such bound applies to it.
     */
    public long domainHash() {
        return domainHash;
    }

    public void domainHash(long hash) {
        domainHash = hash;
    }

    /** The client's bytes, between reader and writer index; the caller of the pipeline owns them. */
    public ByteBuf message() {
        return message;
    }

    /**
     * From now on the stages after the one running see {@code message} in place of the client's
     * bytes, and it is read again: a stage's own buffer, valid while the stages run, holding what it
     * changed before the query goes upstream (the forwarder and a parked query copy it; the answers
     * made after answer it). The caller of the pipeline still owns and releases the client's.
     */
    public void rewrite(ByteBuf message) {
        this.message = message;
        if (view.read(message) != QueryView.Check.QUERY) {
            throw new IllegalArgumentException("a rewritten query must still be one");
        }
    }

    /** What was read of the message; filled by the first stage. */
    public QueryView view() {
        return view;
    }

    /** Where the query came from, and where its answer goes unless it {@link #answersNobody}. */
    public Route route() {
        return route;
    }

    /**
     * From now on its answers go to {@code wrapped}, which wraps its route (CoreDNS's plugins wrap
     * the ResponseWriter): a stage that must know its answer on the way back among others' puts
     * its own route there, which answers every question as the client's route does.
     */
    public void reroute(Route wrapped) {
        route = wrapped;
    }

    /** Where its answer goes: its {@link #route}, or no one for a prefetch, asked as its client's was. */
    public Route replyRoute() {
        return answersNobody ? Route.nobody(route.datagram()) : route;
    }

    /** Whether the query came in a datagram. */
    public boolean overUdp() {
        return route.datagram();
    }

    /** Whether its client proved it owns its address ({@link Route#verified}). */
    public boolean verified() {
        return route.verified();
    }

    /**
     * The client's IP address, over any transport: the one its proxy's PROXY header named, or the
     * peer's. What the client rules, the exemptions and per-client budgets judge.
     */
    public InetAddress clientIp() {
        return route.clientIp();
    }

    /**
     * From now on, its answers go to no one: the cache has answered the client and sends the query
     * on to refresh its answer (a prefetch). The stages after judge it as ever, for its client.
     */
    public void answerNobody() {
        answersNobody = true;
    }

    /** Whether its answers go to no one ({@link #answerNobody}). */
    public boolean answersNobody() {
        return answersNobody;
    }

    /**
     * Answers with {@code answer} (whose reference this takes), made by sluice, back through the
     * stages before the one running the query.
     */
    public void answer(ByteBuf answer) {
        answer(answer, Answer.Source.SLUICE);
    }

    /**
     * Answers with {@code answer} (whose reference this takes; null for none, a dropped query's),
     * made by {@code source}: see {@link #answer(ByteBuf)}.
     *
     * @return who made the answer that left: another than {@code source} when an answer side put
     *         one in its place
     */
    public Answer.Source answer(ByteBuf answer, Answer.Source source) {
        return pipeline.back(stage, this, answer, source, null);
    }

    /**
     * {@link #answer(ByteBuf, Answer.Source)}, {@code leaving} told who made what leaves before it
     * leaves: what counts the answer counts it before the client can see it.
     */
    public Answer.Source answer(ByteBuf answer, Answer.Source source, Answer.Leaving leaving) {
        return pipeline.back(stage, this, answer, source, leaving);
    }

    /**
     * Answers with the question echoed, {@code rcode}, header flags {@code flags} (RA, TC) and no
     * records; with an OPT (and an Extended DNS Error when {@code text} is set) if the query had one.
     */
    public void answerWithQuestion(int flags, int rcode, int edeCode, byte[] text) {
        answer(Answers.withQuestion(Transport.ALLOCATOR, message, view, flags, rcode, edeCode, text));
    }

    /** {@link #answerWithQuestion}, the text being {@code text[0, textLength)}: a buffer reused per query. */
    public void answerWithQuestion(int flags, int rcode, int edeCode, byte[] text, int textLength) {
        answer(Answers.withQuestion(Transport.ALLOCATOR, message, view, flags, rcode, edeCode, text, textLength));
    }

    /** A copy of this query to keep past the stages' run. */
    public ParkedQuery park() {
        ByteBuf copy = Transport.ALLOCATOR.buffer(message.readableBytes())
                .writeBytes(message, message.readerIndex(), message.readableBytes());
        return new ParkedQuery(copy, route, answersNobody, answerNote, domainHash);
    }

    /**
     * Tells the client's route that a query it was told would be answered ({@link Outcome#PARKED})
     * never will be: a connection counts the answers it owes.
     */
    public void droppedAfterParking() {
        if (!answersNobody) {
            route.dropped(message);
        }
    }
}
