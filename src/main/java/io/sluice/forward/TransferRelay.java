package io.sluice.forward;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.sluice.transport.WriteBatch;
import io.sluice.wire.QueryView;
import io.sluice.wire.ZoneTransfer;

/**
 * One loop's zone transfers (AXFR, IXFR) relayed to TCP clients. A transfer is many reply
 * messages under the query's one ID: each but the last is written to the client as it comes (a
 * {@link TransferPart}, which the connection does not count as an answer), and the last goes
 * back as the query's answer. The query keeps its slot and upstream ID all along, each message
 * with a deadline of its own.
 *
 * <p>A transfer cut off part-way (its upstream stalls or closes, its client goes away or reads far
 * slower than the upstream sends) closes the client's connection, so that the client does not
 * take part of a zone for all of it, and the upstream connection too, or the rest of the zone
 * would keep arriving on it under an ID that is free again. Confined to its loop.
 */
final class TransferRelay {
    /** Bytes of a zone transfer waiting for a slow client before the transfer is cut off. */
    static final long MAX_BACKLOG_BYTES = 16 << 20;

    private final ForwardMeters meters;
    private final WriteBatch writes;

    TransferRelay(ForwardMeters meters, WriteBatch writes) {
        this.meters = meters;
        this.writes = writes;
    }

    /**
     * Whether {@code q}, the query {@code view} read from {@code query}, is a zone transfer: one
     * that came over a connection (a UDP client's is asked and answered as any query) and asks
     * AXFR or IXFR. Readies {@code q.transfer} to follow its messages when so.
     */
    static boolean begins(PendingQuery q, ByteBuf query, QueryView view) {
        q.transferring = false;
        q.isTransfer = q.route.connection() != null && view.hasQuestion() && ZoneTransfer.isTransfer(view.qtype());
        if (q.isTransfer) {
            if (q.transfer == null) {
                q.transfer = new ZoneTransfer();
            }
            q.transfer.start(query, view);
        }
        return q.isTransfer;
    }

    /** Whether {@code reply}, taken for {@code q}, is its last message: always, but for a transfer's. */
    static boolean isLast(PendingQuery q, ByteBuf reply) {
        return !q.isTransfer || q.transfer.isLast(reply);
    }

    /** Whether the client of {@code q} still reads, and keeps up with, the transfer. */
    static boolean clientKeepsUp(PendingQuery q) {
        Channel client = q.route.connection();
        return client.isActive() && client.bytesBeforeWritable() <= MAX_BACKLOG_BYTES;
    }

    /** Writes {@code part} (whose reference this takes), a message before the last, to {@code q}'s client. */
    void relay(PendingQuery q, ByteBuf part) {
        writes.write(q.route.connection(), new TransferPart(part));
        q.transferring = true;
    }

    /** Cuts {@code q}'s transfer off: its client's connection and its upstream connection close. */
    void cutOff(PendingQuery q) {
        meters.transfersAborted.increment();
        Channel client = q.route.connection();
        client.flush();
        client.close();
        if (q.link instanceof TcpUpstreamLink tcpLink) {
            tcpLink.close(); // its other queries are handed back and retried on a new connection
        }
    }
}
