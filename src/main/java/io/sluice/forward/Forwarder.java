package io.sluice.forward;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.sluice.config.Settings;
import io.sluice.pipeline.Answer;
import io.sluice.pipeline.InternalErrors;
import io.sluice.pipeline.MessageTap;
import io.sluice.pipeline.Route;
import io.sluice.pipeline.Stage;
import io.sluice.pipeline.UpstreamGate;
import io.sluice.transport.Transport;
import io.sluice.transport.WriteBatch;
import io.sluice.wire.ClientSubnet;
import io.sluice.wire.Names;
import io.sluice.wire.QueryView;
import io.sluice.wire.Replies;
import io.sluice.wire.TcpKeepalive;
import io.sluice.wire.Wire;
import java.util.concurrent.TimeUnit;

/**
 * Sends one event loop's queries upstream and their answers back: message-ID rewriting and
 * matching, timeouts, retransmission at each upstream's measured retransmit timeout
 * ({@link RttEstimates}), failover to the next upstream, the health counting that marks one down,
 * SERVFAIL when none is left. What it keeps lives in classes of its own: the in-flight slots and
 * deadlines ({@link InFlightTable}), the sockets and connections to the upstreams
 * ({@link UpstreamLinks}), the order and health of the upstreams ({@link UpstreamPool},
 * {@link FirstUpstream}), 0x20 ({@link CaseRandomizer}), the UDP payload size asked
 * ({@link UdpPayloadCap}) and zone transfers ({@link TransferRelay}). Every answer goes back
 * through the forward stage's continuation, the stages' answer sides, to the query's route.
 *
 * <p>Confinement: one Forwarder per event loop, and every method but {@link #start} and
 * {@link #close} runs on that loop's thread, as do all the channels it reads. That is why nothing
 * here is locked or volatile.
 */
public final class Forwarder {
    private final EventLoop loop;
    private final UpstreamPool pool;
    private final ForwardMeters meters;
    /** How long one attempt waits: the per-upstream timeout, or the query's whole budget if shorter. */
    private final long attemptNanos;
    /** The most a query may take over all its attempts (query-timeout). */
    private final long queryNanos;
    /** UDP attempts are sent again at their upstream's retransmit timeout, earlier ones still awaited. */
    private final boolean retransmit;
    private final RttEstimates rtt;

    private final InFlightTable inFlight;
    private final UpstreamGate gate;
    private final UpstreamLinks links;
    private final WriteBatch writes;
    private final QueryIds ids = new QueryIds();
    private final FirstUpstream firstUpstream;
    private final CaseRandomizer caseRandomizer;
    private final UdpPayloadCap udpPayload;
    private final TransferRelay transfers;
    private final ClientAnswers answers;
    /**
     * Per upstream, the replies this loop has taken from it. A timeout counts towards marking an
     * upstream down only if none came since that query left: an upstream that ignores some queries
     * (junk, a name it cannot resolve in time) while answering others is not down, even when a
     * tick expires several of those in a row.
     */
    private final long[] answersFrom;
    /** Run after each flush of the loop's writes, until this closes. */
    private final Runnable endOfBatch;
    /** What sees each query sent upstream and each reply taken (dnstap), or null. */
    private final MessageTap tap;
    private final InternalErrors errors;

    private final DeadlineTicks ticks;
    /** How late a tick may notice a deadline: what "a next attempt fits in the query's budget" allows. */
    private final long lateness;
    private boolean closed;

    /**
     * @param maxInflight this loop's share of {@code max-inflight}
     * @param writes      the loop's writes, which its routes back to clients share
     * @param errors      where a bug met by a tick or a UDP reply is counted
     * @param tap         what sees the messages to and from upstreams, or null
     * @param gate        what bounds the queries of a domain waiting on upstreams
     */
    public Forwarder(EventLoop loop, UpstreamPool pool, ForwardMeters meters, Transport transport, Settings settings,
                     int maxInflight, WriteBatch writes, InternalErrors errors, MessageTap tap, UpstreamGate gate) {
        this.loop = loop;
        this.tap = tap;
        this.errors = errors;
        this.pool = pool;
        this.meters = meters;
        this.attemptNanos = Math.min(settings.timeout().toNanos(), settings.queryTimeout().toNanos());
        this.queryNanos = settings.queryTimeout().toNanos();
        this.retransmit = settings.retransmit();
        this.rtt = new RttEstimates(pool.size(), attemptNanos);
        this.gate = gate;
        long tickMillis = DeadlineTicks.tickMillis(attemptNanos, retransmit);
        this.inFlight = new InFlightTable(maxInflight, gate, TimeUnit.MILLISECONDS.toNanos(tickMillis));
        this.links = new UpstreamLinks(this, loop, pool, transport, settings.upstreamSockets(),
                settings.upstreamSocketLifetime(), TimeUnit.NANOSECONDS.toMillis(attemptNanos));
        this.writes = writes;
        this.endOfBatch = links::endOfBatch;
        this.firstUpstream = new FirstUpstream(settings.upstreamPolicy(), pool.size(), ids);
        this.caseRandomizer = new CaseRandomizer(settings.randomizeCase(), pool.size(), meters, ids);
        this.udpPayload = new UdpPayloadCap(settings.maxUdpSize());
        this.transfers = new TransferRelay(meters, writes);
        this.answers = new ClientAnswers(meters, caseRandomizer, TcpKeepalive.timeout(settings.tcpIdleTimeout()));
        this.ticks = new DeadlineTicks(loop, tickMillis, this::expire, inFlight::hasDeadlines, errors);
        this.lateness = ticks.latenessNanos();
        this.answersFrom = new long[pool.size()];
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
     * @param domainHash its domain's, for the gate ({@link io.sluice.pipeline.Query#domainHash})
     * @param back       the way back from the forward stage
     */
    public void forward(ByteBuf query, QueryView view, Route route, long answerNote, long domainHash,
                        Stage.Continuation back) {
        int ticket = gate.enter(domainHash);
        if (ticket == UpstreamGate.CLOSED) {
            answers.gateClosed(query, view, route, answerNote, back);
            return;
        }
        PendingQuery q = inFlight.take();
        if (q == null) {
            gate.leave(ticket);
            answers.inflightFull(query, view, route, answerNote, back);
            return;
        }
        q.gateTicket = ticket;
        long now = System.nanoTime();
        q.begin(query, view, route, back, answerNote, firstUpstream.next(), now);
        if (route.datagram()) {
            q.udpLimit = udpPayload.apply(q.query, query, view);
        }
        if (view.optAt() >= 0) {
            noteClientSubnet(q, query, view);
        }
        meters.forwarded.increment();
        dispatch(q, now, now);
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
        if (position < 0 || !fits(q, from)) {
            fail(q, true); // the upstreams failed it, or are down
            return;
        }
        int i = pool.at(q.firstUpstream, position);
        Upstream u = pool.get(i);
        if (q.subnetAt >= 0 && q.subnetOut == u.sentClientSubnet()) {
            fitClientSubnet(q);
        }
        boolean overStream = !q.route.datagram() || u.overTls();
        UpstreamLink link = links.linkFor(u, overStream, ids);
        int id = link.claim(q, ids);
        if (id == UpstreamLink.NO_ID) {
            fail(q, false); // the ID space of this link is nearly full: max-inflight is far too high
            return;
        }
        q.attempt(position, u, link, id, answersFrom[i], now);
        caseRandomizer.prepare(q, i, overStream, now);
        send(q, now, overStream);
    }

    /**
     * Notes where {@code q}'s Client Subnet option is, if it has one (its query has an OPT record),
     * and copies it: for its replies' check, and for the upstreams not sent it.
     */
    private static void noteClientSubnet(PendingQuery q, ByteBuf query, QueryView view) {
        int at = ClientSubnet.find(query, view);
        if (at < 0 || 4 + query.getUnsignedShort(at + 2) > ClientSubnet.MAX_OPTION_BYTES) {
            return; // none, or one the Client Subnet stage would have answered FORMERR
        }
        q.subnetAt = at - view.base(); // the copy starts at index 0
        q.subnetOptAt = view.optAt() - view.base();
        q.subnetLength = 4 + query.getUnsignedShort(at + 2);
        if (q.subnet == null) {
            q.subnet = new byte[ClientSubnet.MAX_OPTION_BYTES];
            q.subnetOption = Unpooled.wrappedBuffer(q.subnet);
        }
        query.getBytes(at, q.subnet, 0, q.subnetLength);
        q.subnetOut = false;
    }

    /** Takes {@code q}'s Client Subnet out of its query for an upstream not sent it, or puts it back. */
    private static void fitClientSubnet(PendingQuery q) {
        if (q.subnetOut) {
            ClientSubnet.insertAt(q.query, q.subnetOptAt, q.subnetAt, q.subnet, q.subnetLength);
        } else {
            ClientSubnet.removeAt(q.query, q.subnetOptAt, q.subnetAt, q.subnetLength);
        }
        q.subnetOut = !q.subnetOut;
    }

    /** Whether a whole attempt of {@code q} starting at {@code from} ends within its query's end (and a tick). */
    private boolean fits(PendingQuery q, long from) {
        return from + attemptNanos - (q.startNanos + queryNanos) <= lateness;
    }

    /**
     * Arms {@code q}'s current attempt, just claimed, and sends it: over UDP with retransmission
     * on, it waits its upstream's retransmit timeout (doubled per loss in a row) and never past
     * the query's end; else a whole attempt's, which dispatch lets start only if it fits (within a
     * tick).
     */
    private void send(PendingQuery q, long now, boolean overStream) {
        boolean retransmits = retransmit && !overStream;
        long wait = retransmits ? rtt.timeout(q.upstream.index(), q.losses) : attemptNanos;
        long end = q.startNanos + queryNanos;
        q.waitingOutLast = false;
        if (!retransmits || now + wait - end < 0) {
            arm(q, now + wait);
        } else {
            // The next wait passes the query's end: one attempt more, as late as its reply can still
            // come in time, then the end. What ends an outage just before then is not lost.
            long lastChance = end - rtt.timeout(q.upstream.index(), 0);
            q.waitingOutLast = lastChance - (now + RttEstimates.MIN_RTO_NANOS) <= 0;
            arm(q, q.waitingOutLast ? Math.max(now, end) : lastChance);
        }
        if (tap != null) {
            tap.forwarderQuery(q.query, q.link.protocol(), q.link.localAddress(), q.upstream.address());
        }
        q.link.send(q);
    }

    private void arm(PendingQuery q, long deadlineNanos) {
        inFlight.arm(q, deadlineNanos);
        ticks.deadlineQueued();
    }

    /** A reply read from {@code link}, which only its upstream can send on (a connected socket, a TCP connection). */
    void onReply(UpstreamLink link, ByteBuf reply) {
        if (reply.readableBytes() < Wire.HEADER_BYTES) {
            meters.repliesMismatched.increment();
            meters.repliesRejected[link.upstream().index()].increment();
            return;
        }
        int id = reply.getUnsignedShort(reply.readerIndex() + Wire.ID_OFFSET);
        Upstream from = link.upstream();
        // From the upstream's address and port (a connected socket, its connection): proof that it
        // is there, whatever the reply says, a late one to an attempt given up included, so that
        // the attempts waiting on it never count towards max-fails.
        answersFrom[from.index()]++;
        PendingQuery q = link.waiting(id);
        if (q == null) {
            meters.repliesUnexpected.increment();
            meters.repliesRejected[from.index()].increment();
            return;
        }
        if (!q.accepts(reply, from, meters)) {
            return; // keep waiting: the genuine reply may still come
        }
        if (!q.subnetAnswered(reply, from, meters)) {
            if (!(link instanceof UdpUpstreamLink)) {
                linkLost(link, id, false); // no other reply comes on a connection: the next upstream now
            }
            return; // over UDP, one forged for another network, maybe: keep waiting
        }
        int earlier = q.earlierAttempt(link, id);
        if (earlier >= 0) {
            q.adopt(earlier); // a late reply to an attempt sent before the current one
        }
        if (tap != null) {
            tap.forwarderResponse(reply, link.protocol(), link.localAddress(), q.upstream.address());
        }
        int questionEnd = reply.readerIndex() + q.questionEnd - q.query.readerIndex();
        if (q.caseScrambled && Names.dnamePrefix(reply, questionEnd) > 0) {
            askInClientsCase(q, link, id);
            return;
        }
        if (q.caseScrambled && !Replies.questionMissing(reply)
                && reply.getUnsignedShort(reply.readerIndex() + Wire.QDCOUNT_OFFSET) == 1) {
            caseRandomizer.toClientCase(q, reply);
        }
        boolean last = TransferRelay.isLast(q, reply);
        if (last) {
            link.release(id);
            countUnanswered(q, q.upstream);
            q.releaseEarlier();
        }
        q.upstream.recordAnswer();
        long rttNanos = System.nanoTime() - q.sentNanos;
        if (link instanceof UdpUpstreamLink) { // a round trip: over TCP, connecting and a transfer's later messages count too
            rtt.sample(q.upstream.index(), rttNanos);
        }
        meters.latency[q.upstream.index()].observeNanos(rttNanos);
        reply.setShort(reply.readerIndex() + Wire.ID_OFFSET, q.clientId);
        if (!last && !TransferRelay.clientKeepsUp(q)) {
            link.release(id);
            cutOff(q); // nobody reads it, or the client reads far slower than the upstream sends
            return;
        }
        if (last) {
            try {
                answers.relay(q, reply);
            } finally {
                inFlight.release(q); // a bug on the way back costs that answer, never the slot
            }
        } else {
            // A copy: a UDP reply lives in the loop's DatagramBuffer, which the next read overwrites.
            transfers.relay(q, q.replyCopy.copyOf(Transport.ALLOCATOR, reply));
            arm(q, System.nanoTime() + attemptNanos);
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
        q.releaseEarlier();
        inFlight.disarm(q);
        caseRandomizer.restore(q);
        q.keepCase = true;
        q.askAgain();
        long now = System.nanoTime();
        dispatch(q, now, now);
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
        PendingQuery q = link.waiting(id);
        if (q != null) {
            q.waitingOutLast = false; // its deferred failure is the one just counted
        }
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
        if (q == null) {
            return; // handed back already: the query ended with an earlier ID of it on this link
        }
        link.release(id);
        int earlier = q.earlierAttempt(link, id);
        if (earlier >= 0) {
            q.dropEarlier(earlier); // the current attempt goes on
            return;
        }
        if (q.earlier > 0) {
            // Earlier attempts still stand: the latest becomes the current one, and the next tick
            // sends the query again as at its retransmit timeout, in the same letters.
            int latest = q.earlier - 1;
            q.adopt(latest);
            q.dropEarlier(latest);
            arm(q, System.nanoTime());
            return;
        }
        inFlight.disarm(q); // dispatch makes a new deadline entry
        if (q.transferring) {
            cutOff(q); // sent again, the transfer would repeat what the client already has
            return;
        }
        if (q.waitingOutLast) {
            countUnanswered(q, null); // the failure its timeout deferred to the query's end
            q.waitingOutLast = false;
        }
        if (wasHealthy && !q.reconnected) {
            q.reconnected = true;
            q.askAgain();
        }
        long now = System.nanoTime();
        dispatch(q, now, now);
    }

    /**
     * Expires attempts whose deadline passed, each tick: a UDP attempt with retransmission is asked
     * again and still awaited; a TCP or TLS attempt with no other upstream to ask in time waits out
     * the query's end; any other moves to the next upstream; SERVFAIL at the query's end.
     */
    private void expire() {
        publishRtts();
        long now = System.nanoTime();
        for (PendingQuery q = inFlight.nextExpired(now); q != null; q = inFlight.nextExpired(now)) {
            if (q.waitingOutLast) {
                endUnanswered(q);
                continue;
            }
            meters.upstreamTimeouts[q.upstream.index()].increment();
            if (retransmit && q.link instanceof UdpUpstreamLink) {
                if (q.caseMismatched) {
                    caseRandomizer.mismatchTimedOut(q.upstream, now);
                }
                retry(q, now);
                continue;
            }
            if (!q.transferring && !(q.link instanceof UdpUpstreamLink) && q.startNanos + queryNanos - now > lateness
                    && (pool.pick(q.firstUpstream, q.nextUpstream, false) < 0 || !fits(q, q.deadlineNanos))) {
                // Over a stream the transport retransmits what is lost: with no other upstream to ask
                // in time, the attempt is still awaited until the query's end, so that an outage that
                // ends before then loses nothing; the upstream's failure is counted at the end.
                q.waitingOutLast = true;
                arm(q, q.startNanos + queryNanos);
                continue;
            }
            q.link.release(q.upstreamId);
            if (q.transferring) {
                cutOff(q);
                continue;
            }
            if (answersFrom[q.upstream.index()] == q.answersAtSend) {
                countFailure(q.upstream);
            }
            if (q.caseMismatched) {
                caseRandomizer.mismatchTimedOut(q.upstream, now);
            }
            dispatch(q, now, q.deadlineNanos);
        }
    }

    /**
     * Sends {@code q}, whose UDP attempt's retransmit timeout passed, again: to the next upstream
     * of its order, wrapping round to the first (so to the same one when it has one), from another
     * socket under a new ID, with the letters of the attempts before it, all of which stay awaited.
     */
    private void retry(PendingQuery q, long now) {
        if (closed) { // as dispatch does: no new attempt on a closing generation
            q.link.release(q.upstreamId);
            fail(q, false);
            return;
        }
        q.losses++;
        q.keepAwaiting();
        int n = pool.size();
        int from = q.nextUpstream >= n ? 0 : q.nextUpstream;
        int position = pool.pick(q.firstUpstream, from, false);
        if (position < 0) {
            position = from == 0 ? 0 : Math.max(0, pool.pick(q.firstUpstream, 0, false)); // all down: ask anyway
        }
        if (pool.get(pool.at(q.firstUpstream, position)).overTls()) {
            position = q.nextUpstream - 1; // asked again over UDP only: a tls:// upstream's transport retransmits
        }
        int i = pool.at(q.firstUpstream, position);
        Upstream u = pool.get(i);
        if (q.subnetAt >= 0 && q.subnetOut == u.sentClientSubnet()) {
            fitClientSubnet(q);
        }
        UpstreamLink link = links.retryLinkFor(u, q.link, ids);
        int id = link.claim(q, ids);
        if (id == UpstreamLink.NO_ID) {
            endUnanswered(q);
            return;
        }
        meters.retransmits.increment();
        q.attempt(position, u, link, id, answersFrom[i], now);
        q.attempts--; // a retransmission is not a new upstream tried: askAgain and the like count upstreams
        if (caseRandomizer.prepareRetry(q, i, now)) {
            q.releaseEarlier(); // their replies come in letters no longer checked: given up
        }
        send(q, now, false);
    }

    /** {@code q} reached its end with attempts unanswered: their IDs released, the silent upstreams counted, SERVFAIL. */
    private void endUnanswered(PendingQuery q) {
        q.link.release(q.upstreamId);
        countUnanswered(q, null);
        fail(q, true);
    }

    /**
     * Counts a failure against each upstream that {@code q} asked, other than {@code answered} (the
     * one whose reply was taken, or null), that answered nothing, this query or any other, since
     * the first of its attempts to it left: once per upstream and query (max-fails).
     */
    private void countUnanswered(PendingQuery q, Upstream answered) {
        for (int k = 0; k <= q.earlier; k++) {
            Upstream u = k < q.earlier ? q.earlierLinks[k].upstream() : q.upstream;
            long answersAtSend = k < q.earlier ? q.earlierAnswersAtSend[k] : q.answersAtSend;
            if (u != answered && !askedBefore(q, k, u) && answersFrom[u.index()] == answersAtSend) {
                countFailure(u);
            }
        }
    }

    /** Whether one of {@code q}'s earlier attempts before the {@code k}-th went to {@code u}. */
    private static boolean askedBefore(PendingQuery q, int k, Upstream u) {
        for (int j = 0; j < k; j++) {
            if (q.earlierLinks[j].upstream() == u) {
                return true;
            }
        }
        return false;
    }

    /** Publishes this loop's smoothed RTTs to the upstreams, for the API and the metrics; once a tick. */
    private void publishRtts() {
        for (int i = 0; i < pool.size(); i++) {
            pool.get(i).publishRtt(rtt.smoothed(i));
        }
    }

    /** Cuts off {@code q}'s transfer part-way ({@link TransferRelay#cutOff}) and frees its slot. */
    private void cutOff(PendingQuery q) {
        q.releaseEarlier();
        transfers.cutOff(q);
        inFlight.release(q);
    }

    private void countFailure(Upstream u) {
        if (u.recordFailure()) {
            pool.markedDown(u);
        }
    }

    /** Answers {@code q} SERVFAIL, or what an answer side has instead ({@link ClientAnswers#servfail}); frees its slot. */
    private void fail(PendingQuery q, boolean upstreamsFailed) {
        q.releaseEarlier();
        try {
            answers.servfail(q, upstreamsFailed);
        } finally {
            inFlight.release(q);
        }
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
        ticks.stop();
        for (PendingQuery q : inFlight.inUse()) {
            if (q.link != null) {
                q.link.release(q.upstreamId); // a link closed below hands back only what it still holds
            }
            q.releaseEarlier();
            if (q.transferring) {
                cutOff(q);
            } else {
                fail(q, false);
            }
        }
        links.close();
        inFlight.close();
        writes.removeAfterFlush(endOfBatch);
    }
}
