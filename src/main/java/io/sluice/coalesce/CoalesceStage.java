package io.sluice.coalesce;

import io.netty.buffer.ByteBuf;
import io.sluice.pipeline.Answer;
import io.sluice.pipeline.AnswerSide;
import io.sluice.pipeline.Outcome;
import io.sluice.pipeline.Query;
import io.sluice.pipeline.Stage;
import io.sluice.transport.TcpFraming;
import io.sluice.transport.Transport;
import io.sluice.wire.AnswerKey;
import io.sluice.wire.QueryEdns;
import io.sluice.wire.QueryView;
import io.sluice.wire.ReplyRecords;
import io.sluice.wire.Wire;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.LongAdder;

/**
 * One loop's coalescing. A query whose answer would share a cache entry with one of the loop's
 * queries now waiting on an upstream ({@link AnswerKey}: the name in any case, type, class, RD,
 * CD, AD, DO, and TCP or the UDP size asked) joins that one, its {@link Leader}, instead of going
 * on; any other goes on as a leader, its route wrapped so that this stage knows its answer on the
 * way back ({@link #answer}). There each query that joined gets its own copy of that answer, or
 * of the failure, as if it had been its own: its ID, its letters, none of the other client's
 * options, the same maker (an upstream's reply as {@link Answer.Source#SHARED}, which the cache
 * keeps and the flood watch counts once, as the leader's), back through the stages before this
 * one and out through its route. A leader takes at most {@code maxWaiters}; past that a query goes
 * on as a leader in the full one's place, which keeps its waiters: a stampede of n costs n /
 * (max + 1) upstream queries. A cache's prefetch neither joins nor leads.
 *
 * <p>Each loop joins its own queries only: identical queries on two loops go upstream twice, and
 * nothing here is shared or locked.
 *
 * <p>The leaders are found by the keyed 64-bit hash of their key in an open-addressing table of
 * {@link #SLOTS} slots, probed linearly and emptied by backward shifting (no tombstones); a hash
 * match is confirmed on the key's bytes. With half the slots taken, a query with no leader goes on
 * unregistered: probes stay short whatever arrives. Leaders and waiters are reused; a leader goes
 * back to the spares at its answer side, before its answer has left through it, and no query is
 * handled on the way back, so it is not taken again before that answer is gone.
 */
final class CoalesceStage implements Stage, AnswerSide {
    static final int SLOTS = 1 << 14;
    private static final int MASK = SLOTS - 1;
    /** Spare leaders and waiters kept for reuse; past these a burst allocates. */
    private static final int SPARES = 1024;

    private final int maxWaiters;
    private final int maxUdpSize;
    private final LongAdder coalesced;
    private final AnswerKey key = new AnswerKey();
    private final QueryEdns edns = new QueryEdns();
    private final long[] hashes = new long[SLOTS];
    private final Leader[] leaders = new Leader[SLOTS];
    private int leaderCount;
    /** Queries joined to a leader now, over all leaders. */
    private int waiting;
    private final ArrayDeque<Leader> spareLeaders = new ArrayDeque<>();
    private final ArrayDeque<Waiter> spareWaiters = new ArrayDeque<>();
    /** The way back from here, which a joined query's answer takes. */
    private Continuation next;
    /** A joined query's answer, its reading, and what of the shared answer it gets. */
    private final Answer shared = new Answer();
    private final QueryView view = new QueryView();
    private final ReplyRecords records = new ReplyRecords();
    private byte[] kept;

    CoalesceStage(int maxWaiters, int maxUdpSize, LongAdder coalesced) {
        this.maxWaiters = maxWaiters;
        this.maxUdpSize = maxUdpSize;
        this.coalesced = coalesced;
    }

    @Override
    public void attach(Continuation next) {
        this.next = next;
    }

    @Override
    public Outcome handle(Query q) {
        if (q.answersNobody() || !key.of(q.message(), q.view(), edns, q.overUdp(), maxUdpSize)) {
            return Outcome.CONTINUE;
        }
        int at = find(key.hash());
        Leader found = leaders[at];
        if (found != null && found.waiterCount < maxWaiters) {
            join(found, q);
            return Outcome.ANSWERED; // with its leader's answer
        }
        if (found == null && leaderCount >= SLOTS / 2) {
            return Outcome.CONTINUE;
        }
        Leader l = spareLeaders.isEmpty() ? new Leader(this) : spareLeaders.pop();
        l.route = q.route();
        l.keyLength = key.copyTo(l.key, 0);
        l.hash = key.hash();
        l.inTable = true;
        if (found != null) {
            found.inTable = false; // full: it keeps its waiters, and is found no more
        } else {
            leaderCount++;
        }
        hashes[at] = l.hash;
        leaders[at] = l;
        q.reroute(l);
        return Outcome.CONTINUE;
    }

    private void join(Leader l, Query q) {
        ByteBuf m = q.message();
        Waiter w = spareWaiters.isEmpty() ? new Waiter() : spareWaiters.pop();
        w.query = Transport.ALLOCATOR.buffer(m.readableBytes()).writeBytes(m, m.readerIndex(), m.readableBytes());
        w.route = q.route();
        w.answerNote = q.answerNote();
        w.next = l.waiters;
        l.waiters = w;
        l.waiterCount++;
        waiting++;
        coalesced.increment();
    }

    @Override
    public AnswerSide answers() {
        return this;
    }

    /** A leader's answer: each query that joined it gets its own copy, then the leader is done. */
    @Override
    public void answer(Answer a) {
        if (!(a.route() instanceof Leader l) || l.stage != this) {
            return;
        }
        if (l.inTable) {
            remove(slotOf(l));
        }
        Waiter w = l.waiters;
        waiting -= l.waiterCount;
        l.waiters = null;
        l.waiterCount = 0;
        if (spareLeaders.size() < SPARES) {
            spareLeaders.push(l);
        }
        Answer.Source source = a.source() == Answer.Source.UPSTREAM ? Answer.Source.SHARED : a.source();
        try {
            for (; w != null; w = answered(w)) {
                view.read(w.query);
                ByteBuf copy = a.message() == null ? null : copyFor(w.query, a.message());
                next.back(shared.fill(w.query, view, w.route, w.answerNote, copy, source).udpLimit(a.udpLimit()));
            }
        } finally {
            for (; w != null; w = answered(w)) { // a bug on the way back cost these their answers, never their buffers
                w.route.dropped(w.query);
            }
        }
    }

    /**
     * A copy of {@code message}, the answer to an identical query, for the joined query
     * {@code query} ({@link #view} has read it): its ID, its question's name in its client's letters
     * (the same octets but for case, as their keys are one), and none of the options that were the
     * other client's alone (a COOKIE, an NSID, PADDING: what the cache keeps of an answer for every
     * client, {@link ReplyRecords#copyToKeep}).
     */
    private ByteBuf copyFor(ByteBuf query, ByteBuf message) {
        ByteBuf copy;
        if (records.read(message)) {
            if (kept == null) {
                kept = new byte[TcpFraming.MAX_MESSAGE_BYTES];
            }
            int n = records.copyToKeep(message, kept, 0);
            copy = Transport.ALLOCATOR.buffer(n).writeBytes(kept, 0, n);
        } else { // one the cache would not keep either (more records than it reads): as it came
            copy = Transport.ALLOCATOR.buffer(message.readableBytes())
                    .writeBytes(message, message.readerIndex(), message.readableBytes());
        }
        copy.setShort(Wire.ID_OFFSET, view.id());
        if (copy.getUnsignedShort(Wire.QDCOUNT_OFFSET) == 1) {
            copy.setBytes(Wire.HEADER_BYTES, query, view.nameStart(), view.nameEnd() - view.nameStart());
        }
        return copy;
    }

    /** Gives a waiter that has been answered back for reuse, its query released; the next one. */
    private Waiter answered(Waiter w) {
        Waiter after = w.next;
        w.query.release();
        w.query = null;
        w.route = null;
        w.next = null;
        if (spareWaiters.size() < SPARES) {
            spareWaiters.push(w);
        }
        return after;
    }

    /** Queries joined to a leader: they are answered when it is, and a stop drains them with it. */
    @Override
    public int parked() {
        return waiting;
    }

    /** The slot of {@link #key}'s leader, or the empty slot where it would go. */
    private int find(long hash) {
        for (int i = (int) hash & MASK; ; i = (i + 1) & MASK) {
            Leader l = leaders[i];
            if (l == null || hashes[i] == hash && key.sameAs(l.key, 0, l.keyLength)) {
                return i;
            }
        }
    }

    /** The slot of {@code l}, which is in the table. */
    private int slotOf(Leader l) {
        for (int i = (int) l.hash & MASK; ; i = (i + 1) & MASK) {
            if (leaders[i] == l) {
                return i;
            }
        }
    }

    /** Empties slot {@code at}, moving back each later entry of its run that may go in its place. */
    private void remove(int at) {
        leaders[at] = null;
        leaderCount--;
        int hole = at;
        for (int i = (at + 1) & MASK; leaders[i] != null; i = (i + 1) & MASK) {
            int home = (int) hashes[i] & MASK;
            // the entry at i may fill the hole when its home is not in (hole, i], cyclically
            if (((i - home) & MASK) >= ((i - hole) & MASK)) {
                leaders[hole] = leaders[i];
                hashes[hole] = hashes[i];
                leaders[i] = null;
                hole = i;
            }
        }
    }
}
