package io.sluice.forward;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.config.Settings;
import io.sluice.pipeline.Answer;
import io.sluice.pipeline.InternalErrors;
import io.sluice.pipeline.MessageTap;
import io.sluice.pipeline.Route;
import io.sluice.pipeline.Stage;
import io.sluice.transport.Transport;
import io.sluice.transport.WriteBatch;
import io.sluice.wire.Answers;
import io.sluice.wire.Names;
import io.sluice.wire.QueryEdns;
import io.sluice.wire.QueryView;
import io.sluice.wire.QuestionCase;
import io.sluice.wire.Replies;
import io.sluice.wire.TcpKeepalive;
import io.sluice.wire.Wire;
import io.sluice.wire.ZoneTransfer;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends one event loop's queries upstream and its replies back: message-ID rewriting and
 * matching, timeouts, failover to the next upstream, the health counting that marks one down,
 * zone transfers, SERVFAIL when none is left. What it keeps lives in classes of its own: the
 * in-flight slots and deadlines ({@link InFlightTable}), the sockets and connections to the
 * upstreams ({@link UpstreamLinks}), the order and health of the upstreams ({@link UpstreamPool}),
 * and the writes flushed once per wake-up ({@link WriteBatch}).
 *
 * <p>Confinement: one Forwarder per event loop, and every method but {@link #start} and
 * {@link #close} runs on that loop's thread, as do all the channels it reads. That is why nothing
 * here is locked or volatile.
 */
public final class Forwarder {
    /** Bytes of a zone transfer waiting for a slow client before the transfer is given up. */
    static final long MAX_TRANSFER_BACKLOG_BYTES = 16 << 20;
    private static final long MIN_TICK_MILLIS = 5;
    private static final long MAX_TICK_MILLIS = 50;
    static final int CASE_FALLBACK_TIMEOUTS = 3;
    static final long CASE_BLIND_NANOS = TimeUnit.MINUTES.toNanos(10);
    private static final Logger LOG = LoggerFactory.getLogger(Forwarder.class);
    private static final byte[] SERVFAIL_TEXT = Answers.text("sluice: no upstream answered");
    private static final byte[] INFLIGHT_TEXT = Answers.text("sluice: too many queries in flight");

    private final EventLoop loop;
    private final UpstreamPool pool;
    private final ForwardMeters meters;
    /** How long one attempt waits: the per-upstream timeout, or the query's whole budget if shorter. */
    private final long attemptNanos;
    /** The most a query may take over all its attempts (query-timeout). */
    private final long queryNanos;

    private final InFlightTable inFlight;
    private final UpstreamLinks links;
    private final WriteBatch writes;
    private final QueryIds ids = new QueryIds();
    private final QueryView scratch = new QueryView();
    private final QueryEdns edns = new QueryEdns();
    /** Where {@link QuestionCase} reads and writes a name. */
    private final byte[] nameScratch = new byte[QuestionCase.SCRATCH_BYTES];
    /**
     * Per upstream, the replies this loop has taken from it. A timeout counts towards marking an
     * upstream down only if none came since that query left: an upstream that ignores some queries
     * (junk, a name it cannot resolve in time) while answering others is not down, even when a
     * tick expires several of those in a row.
     */
    private final long[] answersFrom;

    private final boolean randomizeCase;
    /** max-udp-size: the most a UDP answer may carry, whatever a client offers. */
    private final int maxUdpSize;
    /** What an answer goes back to its client as, through the stages' answer sides. */
    private final Answer answer = new Answer();
    /** Run after each flush of the loop's writes, until this closes. */
    private final Runnable endOfBatch;
    /** What sees each query sent upstream and each reply taken (dnstap), or null. */
    private final MessageTap tap;
    private final InternalErrors errors;
    /** {@code tcp-idle-timeout} as an edns-tcp-keepalive TIMEOUT, for TCP answers relayed. */
    private final int keepaliveTimeout;
    /**
     * Per upstream, this loop's attempts in a row that timed out after a reply right but for the
     * name's case. An upstream that does not keep case produces them; a forger cannot while the
     * upstream answers, because a genuine reply in the sent case resets the count. At
     * {@link #CASE_FALLBACK_TIMEOUTS} the upstream is {@link #caseBlind} until
     * {@link #caseBlindUntil}.
     */
    private final int[] caseTimeouts;
    private final boolean[] caseBlind;
    private final long[] caseBlindUntil;
    private final Settings.UpstreamPolicy policy;
    /** round-robin: the upstream this loop's next query asks first. */
    private int nextInTurn;

    /** Deadlines are checked every tick, and ticks run only while any are queued: an idle loop sleeps. */
    private final long tickMillis;
    /** How late a tick may notice a deadline: what "a next attempt fits in the query's budget" allows. */
    private final long lateness;
    private final Runnable tickTask = this::tick;
    private ScheduledFuture<?> nextTick;
    private boolean closed;

    /**
     * @param maxInflight this loop's share of {@code max-inflight}
     * @param writes      the loop's writes, which its routes back to clients share
     * @param errors      where a bug met by a tick or a UDP reply is counted
     * @param tap         what sees the messages to and from upstreams, or null
     */
    public Forwarder(EventLoop loop, UpstreamPool pool, ForwardMeters meters, Transport transport, Settings settings,
                     int maxInflight, WriteBatch writes, InternalErrors errors, MessageTap tap) {
        this.loop = loop;
        this.tap = tap;
        this.errors = errors;
        this.keepaliveTimeout = TcpKeepalive.timeout(settings.tcpIdleTimeout());
        this.pool = pool;
        this.meters = meters;
        this.attemptNanos = Math.min(settings.timeout().toNanos(), settings.queryTimeout().toNanos());
        this.queryNanos = settings.queryTimeout().toNanos();
        this.randomizeCase = settings.randomizeCase();
        this.maxUdpSize = settings.maxUdpSize();
        this.policy = settings.upstreamPolicy();
        this.inFlight = new InFlightTable(maxInflight);
        this.links = new UpstreamLinks(this, loop, pool, transport, settings.upstreamSockets(),
                settings.upstreamSocketLifetime(), TimeUnit.NANOSECONDS.toMillis(attemptNanos));
        this.writes = writes;
        this.endOfBatch = links::endOfBatch;
        this.tickMillis = Math.max(MIN_TICK_MILLIS,
                Math.min(MAX_TICK_MILLIS, TimeUnit.NANOSECONDS.toMillis(attemptNanos) / 10));
        this.lateness = TimeUnit.MILLISECONDS.toNanos(tickMillis);
        this.answersFrom = new long[pool.size()];
        this.caseTimeouts = new int[pool.size()];
        this.caseBlind = new boolean[pool.size()];
        this.caseBlindUntil = new long[pool.size()];
    }

    /** Connects the upstream UDP sockets of this loop; called once, from outside the loop. */
    public void start() throws InterruptedException {
        links.start();
        loop.submit(() -> writes.addAfterFlush(endOfBatch)).syncUninterruptibly();
    }

    ForwardMeters meters() {
        return meters;
    }

    /**
     * Forwards the query that {@code view} has just read from {@code query}, its answer to go back
     * by {@code back} to {@code route}. Keeps a copy of {@code query}; the caller keeps and
     * releases its own.
     *
     * @param route      where the answer goes: the client's, or no one's for a cache's prefetch
     *                   (the cache keeps it); asked as over TCP unless the route is a datagram's
     * @param answerNote handed back with the answer ({@link Answer#note})
     * @param back       the way back from the forward stage
     */
    public void forward(ByteBuf query, QueryView view, Route route, long answerNote, Stage.Continuation back) {
        PendingQuery q = inFlight.take();
        if (q == null) {
            meters.inflightFull.increment();
            if (back.back(answer.fill(query, view, route, answerNote, Answers.withQuestion(Transport.ALLOCATOR, query,
                    view, Wire.FLAG_RA, Wire.RCODE_SERVFAIL, Answers.EDE_OTHER, INFLIGHT_TEXT),
                    Answer.Source.NOT_FORWARDED)) == Answer.Source.NOT_FORWARDED) {
                meters.servfail.increment(); // else a stale answer went instead, as when none answered
            }
            return;
        }
        // A copy, not a reference: a datagram lives in its loop's DatagramBuffer until the next read.
        q.query = q.queryCopy.copyOf(Transport.ALLOCATOR, query);
        q.questionEnd = view.questionEnd() - view.base(); // the copy starts at index 0
        q.clientId = view.id();
        q.route = route;
        q.back = back;
        q.udpLimit = route.datagram() ? udpLimit(q.query, query, view) : 0;
        q.answerNote = answerNote;
        q.firstUpstream = firstUpstream();
        q.nextUpstream = 0;
        q.attempts = 0;
        q.reconnected = false;
        q.transferring = false;
        q.caseScrambled = false;
        q.keepCase = false;
        q.isTransfer = route.connection() != null && view.hasQuestion() && ZoneTransfer.isTransfer(view.qtype());
        if (q.isTransfer) {
            if (q.transfer == null) {
                q.transfer = new ZoneTransfer();
            }
            q.transfer.start(query, view);
        }
        meters.forwarded.increment();
        long now = System.nanoTime();
        q.startNanos = now;
        dispatch(q, now, now);
    }

    /**
     * The most a UDP answer to the query {@code view} read from {@code query} may carry: the
     * payload size its OPT offers (512 without one), at most {@code max-udp-size}. A larger offer
     * is lowered to that in {@code copy}, the query as sent upstream, so that the upstream fits
     * its answer to it (leaving records out where it may) rather than sluice cutting it to TC; and
     * so that every client of that size or more asks the same, and one cached answer serves them.
     * A query malformed past its question is taken as without EDNS.
     */
    private int udpLimit(ByteBuf copy, ByteBuf query, QueryView view) {
        edns.read(query, view);
        if (edns.udpPayload() > maxUdpSize) {
            copy.setShort(edns.payloadAt() - view.base(), maxUdpSize);
            return maxUdpSize;
        }
        return edns.udpPayload();
    }

    /** The upstream a new query asks first, as {@code upstream-policy} says. */
    private int firstUpstream() {
        int n = pool.size();
        return switch (policy) {
            case SEQUENTIAL -> 0;
            case RANDOM -> ids.nextIndex(n);
            case ROUND_ROBIN -> {
                int first = nextInTurn;
                nextInTurn = first + 1 == n ? 0 : first + 1;
                yield first;
            }
        };
    }

    /**
     * Sends {@code q} to the next upstream it has not tried, or answers SERVFAIL: when none is
     * left, or when a whole attempt no longer fits in the query's budget. Whether it fits is
     * judged from {@code from}: for an attempt that timed out, the moment it was due, not the
     * later tick that noticed it, so that the drift of ticks never costs a query its second
     * upstream (with the defaults, 2 s and 4 s, two attempts always fit). Each expiry may be
     * noticed up to a tick late, which is how far past query-timeout a query can end.
     *
     * @param now  the time now, which the new attempt's deadline counts from
     * @param from when the new attempt would ideally start
     */
    private void dispatch(PendingQuery q, long now, long from) {
        if (closed) { // a link lost as this generation closes: no new connection on a closed one
            fail(q, false);
            return;
        }
        int position = pool.pick(q.firstUpstream, q.nextUpstream, q.attempts == 0);
        if (position < 0 || from + attemptNanos - (q.startNanos + queryNanos) > lateness) {
            fail(q, true); // the upstreams failed it, or are down
            return;
        }
        int i = pool.at(q.firstUpstream, position);
        Upstream u = pool.get(i);
        boolean overStream = !q.route.datagram() || u.overTls();
        UpstreamLink link = links.linkFor(u, overStream, ids);
        int id = link.claim(q, ids);
        if (id == UpstreamLink.NO_ID) {
            fail(q, false); // the ID space of this link is nearly full: max-inflight is far too high
            return;
        }
        q.nextUpstream = position + 1;
        q.attempts++;
        q.upstream = u;
        q.link = link;
        q.upstreamId = id;
        q.answersAtSend = answersFrom[i];
        q.sentNanos = now;
        q.query.setShort(q.query.readerIndex() + Wire.ID_OFFSET, id);
        clientCase(q);
        q.caseMismatched = false;
        if (randomizeCase && !overStream && !q.keepCase && q.questionEnd > Wire.HEADER_BYTES && !isCaseBlind(i, now)) {
            QuestionCase.scramble(q.query, q.query.readerIndex(), q.questionEnd - 4, q.caseMask, nameScratch, ids);
            q.caseScrambled = true;
        }
        arm(q, now);
        if (tap != null) {
            tap.forwarderQuery(q.query, link.protocol(), link.localAddress(), u.address());
        }
        link.send(q);
    }

    /** Gives {@code q.query} the case its client wrote, if this attempt had changed it. */
    private void clientCase(PendingQuery q) {
        if (q.caseScrambled) {
            QuestionCase.flip(q.query, q.query.readerIndex(), q.questionEnd - 4, q.caseMask, nameScratch);
            q.caseScrambled = false;
        }
    }

    private boolean isCaseBlind(int upstream, long now) {
        if (caseBlind[upstream] && now - caseBlindUntil[upstream] >= 0) {
            caseBlind[upstream] = false;
        }
        return caseBlind[upstream];
    }

    /** An attempt timed out after a reply right but for the name's case: evidence the upstream changes case. */
    private void caseMismatchTimedOut(Upstream u, long now) {
        int i = u.index();
        if (++caseTimeouts[i] < CASE_FALLBACK_TIMEOUTS || caseBlind[i]) {
            return;
        }
        caseTimeouts[i] = 0;
        caseBlind[i] = true;
        caseBlindUntil[i] = now + CASE_BLIND_NANOS;
        meters.caseFallbacks.increment();
        LOG.warn("upstream {} answered {} queries in a row only with the name in another case than sent, and they "
                + "timed out: this thread sends it names as clients wrote them for {} minutes (randomize-case)",
                u, CASE_FALLBACK_TIMEOUTS, TimeUnit.NANOSECONDS.toMinutes(CASE_BLIND_NANOS));
    }

    /**
     * Gives {@code q}'s attempt its deadline. Every entry is {@code now + attemptNanos}, so the
     * queue stays in deadline order.
     */
    private void arm(PendingQuery q, long now) {
        inFlight.arm(q, now + attemptNanos);
        if (nextTick == null && !closed) {
            nextTick = loop.schedule(tickTask, tickMillis, TimeUnit.MILLISECONDS);
        }
    }

    /** A reply read from {@code link}, which only its upstream can send on (a connected socket, a TCP connection). */
    void onReply(UpstreamLink link, ByteBuf reply) {
        if (reply.readableBytes() < Wire.HEADER_BYTES) {
            meters.repliesMismatched.increment();
            meters.repliesRejected[link.upstream().index()].increment();
            return;
        }
        int id = reply.getUnsignedShort(reply.readerIndex() + Wire.ID_OFFSET);
        PendingQuery q = link.waiting(id);
        if (q == null) {
            meters.repliesUnexpected.increment();
            meters.repliesRejected[link.upstream().index()].increment();
            return;
        }
        // From the upstream's address and port, to an ID it was sent: proof that it is there,
        // whatever the reply says, so that this attempt's timeout never counts towards max-fails.
        answersFrom[q.upstream.index()]++;
        int base = q.query.readerIndex();
        if (!(q.transferring ? Replies.continuesTransfer(q.query, base, q.questionEnd, reply)
                        : Replies.answers(q.query, base, q.questionEnd, reply, q.caseScrambled))) {
            // keep waiting: the genuine reply may still come
            meters.repliesRejected[q.upstream.index()].increment();
            if (q.caseScrambled && Replies.answers(q.query, base, q.questionEnd, reply, false)) {
                meters.caseMismatched.increment();
                q.caseMismatched = true;
            } else {
                meters.repliesMismatched.increment();
            }
            return;
        }
        if (tap != null) {
            tap.forwarderResponse(reply, link.protocol(), link.localAddress(), q.upstream.address());
        }
        boolean questionMissing = Replies.questionMissing(reply);
        if (q.caseScrambled && Names.dnamePrefix(reply, reply.readerIndex() + (q.questionEnd - base)) > 0) {
            askInClientsCase(q, link, id);
            return;
        }
        if (q.caseScrambled && !questionMissing && reply.getUnsignedShort(reply.readerIndex() + Wire.QDCOUNT_OFFSET) == 1) {
            caseTimeouts[q.upstream.index()] = 0; // it keeps case
            // the client's case, as in clientCase: the reply's name is the query's, byte for byte
            int replyNameEnd = reply.readerIndex() + (q.questionEnd - 4 - base);
            QuestionCase.flip(reply, reply.readerIndex(), replyNameEnd, q.caseMask, nameScratch);
            QuestionCase.flipCopies(reply, reply.readerIndex(), replyNameEnd, replyNameEnd + 4, q.caseMask, nameScratch);
        }
        // A zone transfer is many messages under one ID: the query keeps its slot and ID, and
        // each message its own deadline, until the one that closes the transfer.
        boolean last = !q.isTransfer || q.transfer.isLast(reply);
        if (last) {
            link.release(id);
        }
        q.upstream.recordAnswer();
        meters.latency[q.upstream.index()].observeNanos(System.nanoTime() - q.sentNanos);
        reply.setShort(reply.readerIndex() + Wire.ID_OFFSET, q.clientId);
        Channel client = q.route.connection();
        if (!last && (!client.isActive() || client.bytesBeforeWritable() > MAX_TRANSFER_BACKLOG_BYTES)) {
            link.release(id);
            abortTransfer(q); // nobody reads it, or the client reads far slower than the upstream sends
            return;
        }
        // A copy: a UDP reply lives in the loop's DatagramBuffer, which the next read overwrites.
        ByteBuf copy = questionMissing ? errorWithQuestion(q, reply) : q.replyCopy.copyOf(Transport.ALLOCATOR, reply);
        if (last) {
            if (client != null) {
                TcpKeepalive.setTimeout(copy, keepaliveTimeout); // hop by hop: sluice's, not the upstream's
            }
            if (back(q, copy, Answer.Source.UPSTREAM) == Answer.Source.UPSTREAM && q.route.answersSomebody()) {
                meters.answered.increment();
            }
            releaseSlot(q);
        } else {
            writes.write(client, new TransferPart(copy));
            q.transferring = true;
            arm(q, System.nanoTime());
        }
    }

    /**
     * {@code q}'s attempt was answered through a DNAME (RFC 6672), whose synthesised CNAME target
     * repeats the question's letters: in the case sent for one server (unbound), in the zone's
     * for another (nsd), and which of the two no reply can tell when they agree. So it is asked
     * again, of the same upstream, in the letters its client wrote, and that answer is relayed:
     * the one the upstream gives the client, with none of the case sluice chose. DNAME answers
     * are rare; each costs one more round trip, without the case's guard against forgers (the
     * ID and the port remain).
     */
    private void askInClientsCase(PendingQuery q, UpstreamLink link, int id) {
        link.release(id);
        inFlight.disarm(q);
        clientCase(q);
        q.keepCase = true;
        q.nextUpstream--;
        q.attempts--;
        long now = System.nanoTime();
        dispatch(q, now, now);
    }

    /**
     * An upstream's error header that counts a question it lacks ({@link Replies#questionMissing}),
     * for the client of {@code q}: that error, with the client's question.
     */
    private ByteBuf errorWithQuestion(PendingQuery q, ByteBuf reply) {
        asClientSent(q);
        return Answers.underUpstreamHeader(Transport.ALLOCATOR, q.query, scratch, reply, false);
    }

    /** Puts the client's ID and case back in {@code q}'s query, and reads it into {@link #scratch}. */
    private void asClientSent(PendingQuery q) {
        clientCase(q);
        q.query.setShort(q.query.readerIndex() + Wire.ID_OFFSET, q.clientId);
        scratch.read(q.query);
    }

    /**
     * Sends {@code message} (whose reference this takes), made by {@code source}, back to the
     * client of {@code q} through the stages' answer sides; {@code q}'s slot stays taken.
     *
     * @return who made the answer that left
     */
    private Answer.Source back(PendingQuery q, ByteBuf message, Answer.Source source) {
        asClientSent(q);
        return q.back.back(answer.fill(q.query, scratch, q.route, q.answerNote, message, source).udpLimit(q.udpLimit));
    }

    /**
     * The upstream of {@code link} answered one of its datagrams with ICMP port unreachable: nothing
     * listens there, so every query waiting on the link moves on now rather than at its timeout.
     */
    void refused(UdpUpstreamLink link) {
        link.forEachWaiting(id -> {
            meters.upstreamRefused[link.upstream().index()].increment();
            linkUnreachable(link, id);
        });
    }

    /**
     * The attempt waiting on {@code link} under {@code id} failed for want of a way to the upstream
     * (nothing listens, a TLS handshake failed): counted against the upstream, and moved on now.
     */
    void linkUnreachable(UpstreamLink link, int id) {
        countFailure(link.upstream());
        linkLost(link, id, false);
    }

    /** Writes a query that waited for its TCP connection to come up. */
    void writeWaiting(TcpUpstreamLink link, int id) {
        link.send(link.waiting(id));
    }

    /**
     * The link a query was on has failed: a TCP connection closed, or a UDP socket was told
     * nothing listens. A connection that had answered before was most likely closed by the
     * upstream for idleness: retry once on a new one. Otherwise move on.
     */
    void linkLost(UpstreamLink link, int id, boolean wasHealthy) {
        PendingQuery q = link.waiting(id);
        link.release(id);
        inFlight.disarm(q); // dispatch makes a new deadline entry
        if (q.transferring) {
            abortTransfer(q); // sent again, the transfer would repeat what the client already has
            return;
        }
        if (wasHealthy && !q.reconnected) {
            q.reconnected = true;
            q.nextUpstream--;
            q.attempts--;
        }
        long now = System.nanoTime();
        dispatch(q, now, now);
    }

    /**
     * Runs {@link #expire} and schedules the next tick while deadlines are queued. Answered
     * queries leave their entries behind, and the first tick after the last answer drains them, so
     * a loop without traffic stops ticking one tick after it.
     */
    private void tick() {
        try {
            expire();
        } catch (RuntimeException e) {
            // a bug: the next tick still comes, or no query of this loop would ever time out again
            errors.caught("Forwarder", "a deadline tick", "the next tick goes on", e);
        }
        nextTick = !inFlight.hasDeadlines() || closed ? null : loop.schedule(tickTask, tickMillis, TimeUnit.MILLISECONDS);
    }

    /** Expires attempts whose deadline passed: next upstream, or SERVFAIL. */
    private void expire() {
        long now = System.nanoTime();
        for (PendingQuery q = inFlight.nextExpired(now); q != null; q = inFlight.nextExpired(now)) {
            q.link.release(q.upstreamId);
            meters.upstreamTimeouts[q.upstream.index()].increment();
            if (q.transferring) {
                abortTransfer(q);
                continue;
            }
            if (answersFrom[q.upstream.index()] == q.answersAtSend) {
                countFailure(q.upstream);
            }
            if (q.caseMismatched) {
                caseMismatchTimedOut(q.upstream, now);
            }
            dispatch(q, now, q.deadlineNanos);
        }
    }

    /**
     * A transfer cut off part-way (its upstream stalled or closed, its client went away or does
     * not keep up): the client has some of the zone and must not take it for all of it, so its
     * connection is closed; and the upstream connection too, or the rest of the zone would keep
     * arriving on it under an ID that is free again.
     */
    private void abortTransfer(PendingQuery q) {
        meters.transfersAborted.increment();
        Channel client = q.route.connection();
        client.flush();
        client.close();
        if (q.link instanceof TcpUpstreamLink tcpLink) {
            tcpLink.close(); // its other queries are handed back and retried on a new connection
        }
        releaseSlot(q);
    }

    private void countFailure(Upstream u) {
        if (u.recordFailure()) {
            pool.markedDown(u);
        }
    }

    /**
     * Answers {@code q} SERVFAIL, unless what sees the answers on their way back has one to send
     * instead (the cache: a fresh answer kept while it waited, or a stale one), and frees its slot.
     *
     * @param upstreamsFailed whether the upstreams failed the query (not: it could not be sent)
     */
    private void fail(PendingQuery q, boolean upstreamsFailed) {
        Answer.Source source = upstreamsFailed ? Answer.Source.UPSTREAMS_FAILED : Answer.Source.NOT_FORWARDED;
        asClientSent(q);
        ByteBuf servfail = Answers.withQuestion(Transport.ALLOCATOR, q.query, scratch, Wire.FLAG_RA,
                Wire.RCODE_SERVFAIL, Answers.EDE_NO_REACHABLE_AUTHORITY, SERVFAIL_TEXT);
        if (back(q, servfail, source) == source) {
            meters.servfail.increment();
        }
        releaseSlot(q);
    }

    private void releaseSlot(PendingQuery q) {
        inFlight.release(q);
    }

    /**
     * A bug met by a UDP reply: the reply is dropped, as a lost datagram, and the loop reads on.
     * (Over TCP the connection's pipeline catches it and closes the connection.)
     */
    void replyFailed(RuntimeException e) {
        errors.caught("Forwarder", "an upstream's reply", "the reply is dropped", e);
    }

    WriteBatch writes() {
        return writes;
    }

    /** Queries waiting on upstreams; call on the loop. */
    public int inFlight() {
        return inFlight.inFlight();
    }

    public EventLoop loop() {
        return loop;
    }

    /**
     * Closes the upstream sockets and connections; call on the loop. Once: later calls do nothing.
     * What is still in flight is answered first: SERVFAIL, or a transfer cut off as a stalled one
     * is. A reload closes a replaced generation only a query-timeout after the switch, so what is
     * left then is a zone transfer that long, or a query at sluice's stop.
     */
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (nextTick != null) {
            nextTick.cancel(false);
        }
        for (PendingQuery q : inFlight.inUse()) {
            if (q.link != null) {
                q.link.release(q.upstreamId); // a link closed below hands back only what it still holds
            }
            if (q.transferring) {
                abortTransfer(q);
            } else {
                fail(q, false);
            }
        }
        links.close();
        inFlight.close();
        writes.removeAfterFlush(endOfBatch);
    }
}
