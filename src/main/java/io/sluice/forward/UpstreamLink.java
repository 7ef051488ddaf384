package io.sluice.forward;

import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.collection.IntObjectMap;
import io.sluice.transport.SocketProtocol;
import java.net.InetSocketAddress;
import java.util.function.IntConsumer;

/**
 * Something queries are sent upstream through (a UDP socket or a TCP connection) with the table of
 * which message ID waits for which {@link PendingQuery}. Owned by one event loop.
 */
abstract class UpstreamLink {
    static final int NO_ID = -1;
    private static final int ID_TRIES = 16;

    /**
     * The query waiting for each message ID: an open-addressing map sized by what is in flight.
     * A 65,536-entry array per socket (256 KiB, and a loop has many sockets) would make each claim
     * of a random ID a cache miss (docs/benchmarks.md, "Design choices measured", "Message-ID map").
     */
    private final IntObjectHashMap<PendingQuery> byId = new IntObjectHashMap<>(256);
    private final Upstream upstream;

    UpstreamLink(Upstream upstream) {
        this.upstream = upstream;
    }

    /** The upstream every query on this link goes to. */
    final Upstream upstream() {
        return upstream;
    }

    /** Claims a random free ID for {@code q}, or {@link #NO_ID} if none was found quickly. */
    final int claim(PendingQuery q, QueryIds ids) {
        for (int i = 0; i < ID_TRIES; i++) {
            int id = ids.nextId();
            if (!byId.containsKey(id)) {
                byId.put(id, q);
                return id;
            }
        }
        return NO_ID;
    }

    /** The query waiting for {@code id}, or null. */
    final PendingQuery waiting(int id) {
        return byId.get(id);
    }

    final void release(int id) {
        byId.remove(id);
    }

    /** Whether any query waits on this link for its answer. */
    final boolean anyWaiting() {
        return !byId.isEmpty();
    }

    /**
     * Calls {@code action} with each ID waiting now; used when a connection starts or ends, never
     * per query. The IDs are listed first: a query handed back on a close is retried through this
     * link under a new ID, which a live iteration would then hand back a second time.
     */
    final void forEachWaiting(IntConsumer action) {
        int[] ids = new int[byId.size()];
        int n = 0;
        for (IntObjectMap.PrimitiveEntry<PendingQuery> e : byId.entries()) {
            ids[n++] = e.key();
        }
        for (int i = 0; i < n; i++) {
            action.accept(ids[i]);
        }
    }

    /** Sends {@code q.query}, whose ID field already holds the claimed ID. */
    abstract void send(PendingQuery q);

    /** How this link carries queries, for dnstap. */
    abstract SocketProtocol protocol();

    /** The address queries leave from, or null while there is none (a connection not yet made). */
    abstract InetSocketAddress localAddress();
}
