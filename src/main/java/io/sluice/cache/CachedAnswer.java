package io.sluice.cache;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.wire.QueryView;
import io.sluice.wire.Wire;

/**
 * One answer as an upstream gave it, with where its TTLs are and how long it may be served. Made
 * once, read by every loop, never changed.
 *
 * @param message    the reply's bytes (its OPT without the client's own options)
 * @param ttlOffsets offset in {@code message} of every record's TTL but the OPT's
 * @param optAt      offset of the OPT record, the message's last, or -1
 * @param storedAt   when it was stored, in the cache's clock's nanoseconds
 * @param freshUntil until when it is served as it is, its TTLs counted down
 * @param keepUntil  until when it may be served stale (RFC 8767); {@code freshUntil} when never
 * @param recheckAt  before this, a stale answer is served without asking an upstream: the
 *                   upstreams failed to refresh it lately ({@code storedAt} until they do)
 */
record CachedAnswer(byte[] message, int[] ttlOffsets, int optAt, long storedAt, long freshUntil, long keepUntil,
                    long recheckAt) {
    /** TTL of every record of a stale answer (RFC 8767 section 4 recommends 30 seconds). */
    static final int STALE_TTL = 30;
    /** The EDE info code "Stale Answer" (RFC 8914 section 4.4). */
    static final int EDE_STALE_ANSWER = 3;
    private static final int EDE_OPTION_BYTES = 6;

    int rcode() {
        return message[3] & Wire.RCODE_MASK;
    }

    boolean freshAt(long now) {
        return now - freshUntil < 0;
    }

    boolean staleAt(long now) {
        return !freshAt(now) && now - keepUntil < 0;
    }

    /** Whether it is served stale at {@code now} without asking an upstream again. */
    boolean staleWithoutAskingAt(long now) {
        return staleAt(now) && now - recheckAt < 0;
    }

    /** This answer, served stale without asking an upstream until {@code until}. */
    CachedAnswer recheckingAt(long until) {
        return new CachedAnswer(message, ttlOffsets, optAt, storedAt, freshUntil, keepUntil, until);
    }

    /** Bytes {@link #write} writes. */
    int length(boolean stale) {
        return message.length + (stale && optAt >= 0 ? EDE_OPTION_BYTES : 0);
    }

    /** Bytes the answer takes on the heap, roughly: for the cache's weigher. */
    int heapBytes() {
        return 64 + 16 + message.length + 16 + 4 * ttlOffsets.length;
    }

    /**
     * This answer for the query {@code view} has read: its ID and its question's letter case, the
     * TTLs counted down by the answer's age, or (stale) each 30 seconds with an Extended DNS Error
     * "Stale Answer" in its OPT.
     */
    ByteBuf write(ByteBufAllocator alloc, ByteBuf query, QueryView view, long now, boolean stale) {
        ByteBuf out = alloc.buffer(length(stale));
        int base = out.writerIndex();
        out.writeBytes(message);
        out.setShort(base + Wire.ID_OFFSET, view.id());
        out.setBytes(base + Wire.HEADER_BYTES, query, view.nameStart(), view.nameEnd() - view.nameStart());
        long age = Math.max(0, (now - storedAt) / 1_000_000_000L);
        for (int at : ttlOffsets) {
            long ttl = stale ? STALE_TTL : Math.max(0, out.getUnsignedInt(base + at) - age);
            out.setInt(base + at, (int) ttl);
        }
        if (stale && optAt >= 0) {
            int rdLength = base + optAt + 9;
            out.setShort(rdLength, out.getUnsignedShort(rdLength) + EDE_OPTION_BYTES);
            out.writeShort(Wire.EDNS_OPTION_EDE);
            out.writeShort(2);
            out.writeShort(EDE_STALE_ANSWER);
        }
        return out;
    }
}
