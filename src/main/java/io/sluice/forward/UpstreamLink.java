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

    /** Calls {@code action} with each waiting ID; used when a connection ends, never per query. */
    final void forEachWaiting(IntConsumer action) {
        for (int id = 0; id < slotById.length && pending > 0; id++) {
            if (slotById[id] != 0) {
                action.accept(id);
            }
        }
    }

    /** Sends {@code q.query}, whose ID field already holds the claimed ID. */
    abstract void send(PendingQuery q);
}
