package io.sluice.forward;

import io.netty.buffer.ByteBuf;
import io.sluice.pipeline.Route;
import io.sluice.pipeline.Stage;
import io.sluice.transport.Transport;
import io.sluice.wire.AnswerKey;
import io.sluice.wire.QueryEdns;
import io.sluice.wire.QueryView;
import java.util.ArrayDeque;

/**
 * One query upstream for many identical ones ({@code coalesce}): a query whose answer would share
 * a cache entry with one of its loop's queries now waiting on an upstream ({@link AnswerKey}: the
 * name in any case, type, class, RD, CD, AD, DO, and TCP or the UDP size asked) joins that one, the
 * leader, instead of being sent; when the leader's answer or failure comes, each joined query gets
 * its own copy of it ({@link ClientAnswers}). A leader takes at most {@code coalesce-max-waiters};
 * past that a query is asked on its own and leads the ones after it in the full one's place, which
 * keeps its waiters: a stampede of n costs n / (max + 1) upstream queries, not n - max. Unbound's
 * mesh and BIND's {@code clients-per-query} do the same.
 *
 * <p>Each loop joins its own queries only: identical queries on two loops are asked twice. The
 * table needs no lock, and under a burst the kernel spreads a name's clients over few loops.
 *
 * <p>The leaders are found by the 64-bit keyed hash of their key in an open-addressing table of
 * {@link #SLOTS} slots, probed linearly and emptied by backward shifting (no tombstones); a hash
 * match is confirmed on the key's bytes, which each leader keeps. With more than half the slots
 * taken a new query is not registered as a leader (it is sent, and nothing joins it): probes stay
 * short whatever arrives. Confined to its loop.
 */
final class Coalescing {
    /** Leader slots per loop; at most half are used. */
    static final int SLOTS = 1 << 14;
    private static final int MASK = SLOTS - 1;
    /** A spare query's waiting record, reused; a burst of joins allocates only past these. */
    private static final int SPARE_WAITERS = 256;

    private final int maxWaiters;
    private final int maxUdpSize;
    private final ForwardMeters meters;
    /** The key of the query {@link #join} last read: what {@link #lead} registers. */
    private final AnswerKey key = new AnswerKey();
    private final QueryEdns edns = new QueryEdns();
    /** Whether {@link #key} holds the last query's key, to be led from {@link #vacant} (false: its answer is its own). */
    private boolean keyed;
    /** The slot {@link #join} found for {@link #key}: empty, or its full leader's. */
    private int vacant;
    private final long[] hashes = new long[SLOTS];
    private final PendingQuery[] leaders = new PendingQuery[SLOTS];
    private int leaderCount;
    /** Queries joined to a leader now, over all leaders. */
    private int waiting;
    private final ArrayDeque<Waiter> spare = new ArrayDeque<>();

    /**
     * @param maxWaiters  the most queries that join one leader; 0 turns coalescing off
     * @param maxUdpSize  {@code max-udp-size}: the UDP size a key holds at most, as the cache's does
     */
    Coalescing(int maxWaiters, int maxUdpSize, ForwardMeters meters) {
        this.maxWaiters = maxWaiters;
        this.maxUdpSize = maxUdpSize;
        this.meters = meters;
    }

    /** A query joined to a leader: a copy of its bytes and where its answer goes. */
    static final class Waiter {
        ByteBuf query;
        Route route;
        Stage.Continuation back;
        long answerNote;
        /** The most a UDP answer to it may carry; 0 over a stream. */
        int udpLimit;
        Waiter next;
    }

    /**
     * Joins the query {@code view} has read from {@code query} (which is copied) to the leader of
     * its key, when there is one with room; else leaves its key for {@link #lead}. A query whose
     * answer goes to nobody (a cache's prefetch) never joins.
     *
     * @return whether it joined: its answer comes with the leader's
     */
    boolean join(ByteBuf query, QueryView view, Route route, long answerNote, Stage.Continuation back) {
        keyed = maxWaiters > 0 && key.of(query, view, edns, route.datagram(), maxUdpSize);
        if (!keyed) {
            return false;
        }
        int at = find(key.hash());
        PendingQuery leader = leaders[at];
        if (leader == null) {
            vacant = at;
            return false;
        }
        if (!route.answersSomebody()) { // a prefetch: the leader's answer refreshes the cache as well
            keyed = false;
            return false;
        }
        if (leader.waiterCount >= maxWaiters) {
            vacant = at; // asked on its own, it leads in the full one's place
            return false;
        }
        Waiter w = spare.isEmpty() ? new Waiter() : spare.pop();
        w.query = Transport.ALLOCATOR.buffer(query.readableBytes()).writeBytes(query, query.readerIndex(),
                query.readableBytes());
        w.route = route;
        w.back = back;
        w.answerNote = answerNote;
        w.udpLimit = key.udpSize();
        w.next = leader.waiters;
        leader.waiters = w;
        leader.waiterCount++;
        waiting++;
        meters.coalesced.increment();
        return true;
    }

    /**
     * Registers {@code q}, just begun, as the leader of the key {@link #join} left, when it left one
     * and there is room. Nothing changes the table between the two: they run one after the other
     * for one query, on the loop.
     */
    void lead(PendingQuery q) {
        if (!keyed) {
            return;
        }
        keyed = false;
        int at = vacant;
        PendingQuery full = leaders[at];
        if (full != null) {
            full.leading = false; // it keeps its waiters, and is found no more
        } else if (leaderCount >= SLOTS / 2) {
            return;
        } else {
            leaderCount++;
        }
        q.coalesceKeyLength = key.copyTo(q.coalesceKey(), 0);
        q.coalesceHash = key.hash();
        q.leading = true;
        hashes[at] = key.hash();
        leaders[at] = q;
    }

    /**
     * Ends {@code q}'s leading, if it leads or led: nothing joins it from now on.
     *
     * @return the queries that joined it, last joined first, for its answer to go to; null for none
     */
    Waiter end(PendingQuery q) {
        if (q.coalesceKeyLength == 0) {
            return null;
        }
        if (q.leading) {
            remove(slotOf(q));
            q.leading = false;
        }
        q.coalesceKeyLength = 0;
        Waiter w = q.waiters;
        waiting -= q.waiterCount;
        q.waiters = null;
        q.waiterCount = 0;
        return w;
    }

    /**
     * Gives a waiter that has been answered back for reuse; its query buffer is released.
     *
     * @return the waiter after it in its leader's list, or null
     */
    Waiter answered(Waiter w) {
        Waiter next = w.next;
        w.query.release();
        w.query = null;
        w.route = null;
        w.back = null;
        w.next = null;
        if (spare.size() < SPARE_WAITERS) {
            spare.push(w);
        }
        return next;
    }

    /** Queries joined to a leader now. */
    int waiting() {
        return waiting;
    }

    /** The slot of {@link #key}'s leader, or the empty slot where it would go. */
    private int find(long hash) {
        for (int i = (int) hash & MASK; ; i = (i + 1) & MASK) {
            PendingQuery p = leaders[i];
            if (p == null || hashes[i] == hash && key.sameAs(p.coalesceKey(), 0, p.coalesceKeyLength)) {
                return i;
            }
        }
    }

    /** The slot {@code q} leads from: it is in the table ({@code q.leading}). */
    private int slotOf(PendingQuery q) {
        for (int i = (int) q.coalesceHash & MASK; ; i = (i + 1) & MASK) {
            if (leaders[i] == q) {
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
