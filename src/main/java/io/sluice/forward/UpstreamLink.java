package io.sluice.forward;

import java.util.function.IntConsumer;
/**
 * Something queries are sent upstream through (a UDP socket or a TCP connection) with the table of
 * which message ID waits for which {@link PendingQuery}. Owned by one event loop.
 */
abstract class UpstreamLink {
    static final int NO_ID = -1;
    private static final int ID_TRIES = 16;

    /** Slot index + 1 by message ID; 0 is free. */
    private final int[] slotById = new int[65536];
    private int pending;

    /** Claims a random free ID for {@code q}, or {@link #NO_ID} if none was found quickly. */
    final int claim(PendingQuery q, QueryIds ids) {
        for (int i = 0; i < ID_TRIES; i++) {
            int id = ids.nextId();
            if (slotById[id] == 0) {
                slotById[id] = q.index + 1;
                pending++;
                return id;
            }
        }
        return NO_ID;
    }

    /** The slot index waiting for {@code id}, or -1. */
    final int waiting(int id) {
        return slotById[id] - 1;
    }

    final void release(int id) {
        if (slotById[id] != 0) {
            slotById[id] = 0;
            pending--;
        }
    }

    /**
     * Calls {@code action} with each ID waiting now; used when a connection starts or ends, never
     * per query. The IDs are listed first: a query handed back on a close is retried through this
     * link under a new ID, which a live iteration would then hand back a second time.
     */
    final void forEachWaiting(IntConsumer action) {
        int[] ids = new int[pending];
        int n = 0;
        for (int id = 0; id < slotById.length && n < ids.length; id++) {
            if (slotById[id] != 0) {
                ids[n++] = id;
            }
        }
        for (int i = 0; i < n; i++) {
            action.accept(ids[i]);
        }
    }

    /** Sends {@code q.query}, whose ID field already holds the claimed ID. */
    abstract void send(PendingQuery q);
}
