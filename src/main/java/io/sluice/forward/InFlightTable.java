package io.sluice.forward;

import io.sluice.pipeline.UpstreamGate;

/**
 * One event loop's queries waiting on upstreams: a fixed array of reusable slots, the free ones
 * on a stack (last freed, first reused, so the slots that keep {@link SlotBuffer}s carry the
 * traffic), and the deadlines of their attempts ({@link DeadlineWheel}). Confined to its loop:
 * nothing here is locked.
 */
final class InFlightTable {
    /**
     * Slots that keep {@link SlotBuffer}s: slots are reused last-freed first, so these carry the
     * traffic unless more than this many queries are in flight at once. About 7 MiB per loop at most.
     */
    static final int SLOTS_WITH_BUFFERS = 4096;
    /** Kept query buffer: holds the longest name with the usual EDNS options; larger ones are pooled. */
    static final int SLOT_QUERY_BYTES = 512;
    /** Kept reply buffer: the UDP payload size of DNS Flag Day 2020; larger replies are pooled. */
    static final int SLOT_REPLY_BYTES = 1232;

    private final PendingQuery[] slots;
    private final int[] free;
    private int freeCount;
    private final DeadlineWheel deadlines;
    /** Slots whose deadline entry is live: the ticks run while any is, so an idle loop sleeps. */
    private int armed;
    /** Told of each query that stops waiting, as its slot is released. */
    private final UpstreamGate gate;

    /** @param tickNanos how finely deadlines are told apart: the loop's tick */
    InFlightTable(int capacity, UpstreamGate gate, long tickNanos) {
        this.gate = gate;
        this.deadlines = new DeadlineWheel(tickNanos, System.nanoTime());
        this.slots = new PendingQuery[capacity];
        this.free = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            boolean kept = i < SLOTS_WITH_BUFFERS;
            slots[i] = new PendingQuery(i, kept ? SLOT_QUERY_BYTES : 0, kept ? SLOT_REPLY_BYTES : 0);
            free[i] = capacity - 1 - i;
        }
        this.freeCount = capacity;
    }

    /** A free slot, or null when every slot is in use. */
    PendingQuery take() {
        if (freeCount == 0) {
            return null;
        }
        PendingQuery q = slots[free[--freeCount]];
        q.inUse = true;
        return q;
    }

    /** The slots in use now, listed first (answering one releases it); at close, never per query. */
    java.util.List<PendingQuery> inUse() {
        java.util.List<PendingQuery> out = new java.util.ArrayList<>();
        for (PendingQuery q : slots) {
            if (q.inUse) {
                out.add(q);
            }
        }
        return out;
    }

    /**
     * Gives {@code q}'s slot back; its query buffer is released, its deadline entry voided, and the
     * gate told it waits no longer.
     */
    void release(PendingQuery q) {
        disarm(q);
        gate.leave(q.gateTicket);
        q.query.release();
        q.query = null;
        q.route = null;
        q.back = null;
        q.upstream = null;
        q.link = null;
        q.inUse = false;
        free[freeCount++] = q.index;
    }

    /** Gives {@code q}'s attempt its deadline, which voids any it had. */
    void arm(PendingQuery q, long deadlineNanos) {
        if (!q.armed) {
            q.armed = true;
            armed++;
        }
        q.deadlineNanos = deadlineNanos;
        q.serial++;
        deadlines.add(q.index, q.serial, deadlineNanos);
    }

    /** Voids {@code q}'s deadline entry (its attempt ended some other way). */
    void disarm(PendingQuery q) {
        if (q.armed) {
            q.armed = false;
            armed--;
        }
        q.serial++;
    }

    /**
     * The next query whose deadline has passed, its entry taken out, or null. Entries of attempts
     * that ended otherwise are dropped on the way.
     */
    PendingQuery nextExpired(long now) {
        for (long e = deadlines.pollDue(now); e != DeadlineWheel.NONE; e = deadlines.pollDue(now)) {
            PendingQuery q = slots[DeadlineWheel.slot(e)];
            if (q.serial == DeadlineWheel.serial(e)) {
                q.armed = false;
                armed--;
                return q;
            }
        }
        return null;
    }

    /** Whether any query waits on a deadline: the tick keeps running while so. */
    boolean hasDeadlines() {
        return armed > 0;
    }

    int inFlight() {
        return slots.length - freeCount;
    }

    /** Gives up the slots' kept buffers. */
    void close() {
        for (PendingQuery q : slots) {
            q.queryCopy.release();
            q.replyCopy.release();
        }
    }
}
