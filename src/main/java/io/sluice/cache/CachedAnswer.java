package io.sluice.cache;

import static io.sluice.cache.AnswerTable.CASE_BOUND_AT;
import static io.sluice.cache.AnswerTable.FRESH_UNTIL_AT;
import static io.sluice.cache.AnswerTable.HASH_AT;
import static io.sluice.cache.AnswerTable.HEADER;
import static io.sluice.cache.AnswerTable.KEEP_UNTIL_AT;
import static io.sluice.cache.AnswerTable.KEY_LENGTH_AT;
import static io.sluice.cache.AnswerTable.MESSAGE_LENGTH_AT;
import static io.sluice.cache.AnswerTable.OPT_AT;
import static io.sluice.cache.AnswerTable.RECHECK_AT;
import static io.sluice.cache.AnswerTable.STORED_AT;
import static io.sluice.cache.AnswerTable.TOTAL_AT;
import static io.sluice.cache.AnswerTable.TTL_COUNT_AT;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.sluice.wire.AnswerKey;
import io.sluice.wire.Names;
import io.sluice.wire.QueryView;
import io.sluice.wire.ReplyRecords;
import io.sluice.wire.Wire;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * One loop's copy of a cached answer, as an {@link AnswerTable} entry: a header (lengths, the
 * key's hash, when it was stored, until when it is fresh, may be served stale, is served stale
 * without asking), the key, the offset of every record's TTL but the OPT's, and the reply's bytes
 * (its OPT without the client's own options). Copied out of the table by a lookup, or built from an
 * upstream's reply to be kept; one per use per loop, reused, so that neither allocates.
 */
final class CachedAnswer {
    /** TTL of every record of a stale answer (RFC 8767 section 4 recommends 30 seconds). */
    static final int STALE_TTL = 30;
    /**
     * Answers that live shorter than this are never prefetched: their refreshes would be a large
     * share of their queries (BIND prefetches from a TTL of 9 s up).
     */
    static final long PREFETCH_MIN_LIFETIME_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
    /** The EDE info code "Stale Answer" (RFC 8914 section 4.4). */
    static final int EDE_STALE_ANSWER = 3;
    private static final int EDE_OPTION_BYTES = 6;
    private static final int MAX_MESSAGE = 0xFFFF;
    /** The largest entry: the header, the longest key, a TTL per record, the longest message. */
    static final int MAX_BYTES = HEADER + AnswerKey.MAX_BYTES + 2 * ReplyRecords.MAX_RECORDS + MAX_MESSAGE;
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);

    private final byte[] entry = new byte[MAX_BYTES];
    private int length;
    private int ttlsAt;
    private int ttlCount;
    private int messageAt;
    private int messageLength;
    /** Offset of the OPT record in the message, the message's last, or -1. */
    private int optAt;
    private long storedAt;
    private long freshUntil;
    private long keepUntil;
    /**
     * Before when no upstream is asked about it again. After a failed refresh, it is served stale
     * without asking until then (RFC 8767's failure recheck timer); once a prefetch is sent, it is
     * the answer's expiry, so that no second prefetch follows and a stale answer is not served
     * without asking for it. Its storing time otherwise: nothing held back.
     */
    private long recheckAt;
    /**
     * It holds labels the upstream wrote from the question's letters as asked, which no rewriting
     * of the question can tell from the zone's own: the target of the CNAME a DNAME synthesised
     * (RFC 6672), in the letters of the question for one server (unbound) and in the zone's for
     * another (nsd). So it is served only to a question of the same letters, byte for byte.
     */
    private boolean caseBound;
    private int slot;
    private long word;

    byte[] entry() {
        return entry;
    }

    /** Bytes of the entry. */
    int length() {
        return length;
    }

    /** Where {@link AnswerTable#find} found it: the slot, and the word it read there. */
    void foundAt(int slot, long word) {
        this.slot = slot;
        this.word = word;
    }

    int slot() {
        return slot;
    }

    long word() {
        return word;
    }

    /**
     * Reads the {@code length} bytes the table copied into {@link #entry}: false unless they are a
     * whole entry of {@code hash} and {@code key}.
     */
    boolean read(int length, long hash, AnswerKey key) {
        int keyLength = Short.toUnsignedInt((short) SHORT.get(entry, KEY_LENGTH_AT));
        int ttls = Short.toUnsignedInt((short) SHORT.get(entry, TTL_COUNT_AT));
        int message = (int) INT.get(entry, MESSAGE_LENGTH_AT);
        int at = HEADER + keyLength + 2 * ttls;
        if ((long) LONG.get(entry, HASH_AT) != hash || message < Wire.HEADER_BYTES || message > MAX_MESSAGE
                || at + message != length || !key.sameAs(entry, HEADER, keyLength)) {
            return false;
        }
        parse(length);
        return true;
    }

    /**
     * Builds the entry to keep for {@code key} from the reply {@code records} has just read: false
     * when it does not fit. Every TTL kept is at most {@code maxTtl} seconds, so that what is
     * served never tells a client's cache to keep a record longer than this entry may (a negative
     * answer's SOA: RFC 2308 section 5; max-ttl).
     */
    boolean build(AnswerKey key, ByteBuf reply, ReplyRecords records, long now, long freshUntil, long keepUntil,
                  long maxTtl) {
        int keyLength = key.copyTo(entry, HEADER);
        int ttls = records.ttlCount();
        int at = HEADER + keyLength + 2 * ttls;
        int message = records.copyToKeep(reply, entry, at);
        if (message < 0 || message > MAX_MESSAGE) {
            return false;
        }
        int[] offsets = records.ttlOffsets();
        for (int i = 0; i < ttls; i++) {
            SHORT.set(entry, HEADER + keyLength + 2 * i, (short) offsets[i]);
            int ttlAt = at + offsets[i];
            long ttl = ((entry[ttlAt] & 0xFFL) << 24) | ((entry[ttlAt + 1] & 0xFF) << 16)
                    | ((entry[ttlAt + 2] & 0xFF) << 8) | (entry[ttlAt + 3] & 0xFF); // wire order
            if (ttl > maxTtl) {
                entry[ttlAt] = (byte) (maxTtl >>> 24);
                entry[ttlAt + 1] = (byte) (maxTtl >>> 16);
                entry[ttlAt + 2] = (byte) (maxTtl >>> 8);
                entry[ttlAt + 3] = (byte) maxTtl;
            }
        }
        INT.set(entry, TOTAL_AT, at + message);
        SHORT.set(entry, KEY_LENGTH_AT, (short) keyLength);
        SHORT.set(entry, TTL_COUNT_AT, (short) ttls);
        LONG.set(entry, HASH_AT, key.hash());
        LONG.set(entry, STORED_AT, now);
        LONG.set(entry, FRESH_UNTIL_AT, freshUntil);
        LONG.set(entry, KEEP_UNTIL_AT, keepUntil);
        LONG.set(entry, RECHECK_AT, now);
        INT.set(entry, MESSAGE_LENGTH_AT, message);
        INT.set(entry, OPT_AT, records.optAt() < 0 ? -1 : records.optAt() - reply.readerIndex());
        INT.set(entry, CASE_BOUND_AT, Names.dnamePrefix(reply, records.questionNameEnd() + 4) > 0 ? 1 : 0);
        parse(at + message);
        return true;
    }

    private void parse(int length) {
        this.length = length;
        int keyLength = Short.toUnsignedInt((short) SHORT.get(entry, KEY_LENGTH_AT));
        ttlCount = Short.toUnsignedInt((short) SHORT.get(entry, TTL_COUNT_AT));
        ttlsAt = HEADER + keyLength;
        messageAt = ttlsAt + 2 * ttlCount;
        messageLength = (int) INT.get(entry, MESSAGE_LENGTH_AT);
        optAt = (int) INT.get(entry, OPT_AT);
        storedAt = (long) LONG.get(entry, STORED_AT);
        freshUntil = (long) LONG.get(entry, FRESH_UNTIL_AT);
        keepUntil = (long) LONG.get(entry, KEEP_UNTIL_AT);
        recheckAt = (long) LONG.get(entry, RECHECK_AT);
        caseBound = (int) INT.get(entry, CASE_BOUND_AT) != 0;
    }

    /** Whether it may be served to the question {@code view} has read ({@link #caseBound}). */
    boolean servesCase(ByteBuf query, QueryView view) {
        if (!caseBound) {
            return true;
        }
        int length = view.nameEnd() - view.nameStart();
        int at = messageAt + Wire.HEADER_BYTES;
        for (int i = 0; i < length; i++) {
            if (entry[at + i] != query.getByte(view.nameStart() + i)) {
                return false;
            }
        }
        return true;
    }

    /** Makes this the copy of an entry {@link AnswerTable#forEach} checked: for showing, not serving. */
    void load(byte[] checked, int length) {
        System.arraycopy(checked, 0, entry, 0, length);
        parse(length);
    }

    /** Bytes of its key, which follows the header. */
    int keyLength() {
        return ttlsAt - HEADER;
    }

    /** The records of the answer section. */
    int answerCount() {
        return (entry[messageAt + Wire.ANCOUNT_OFFSET] & 0xFF) << 8 | entry[messageAt + Wire.ANCOUNT_OFFSET + 1] & 0xFF;
    }

    /** Until when it is fresh. */
    long freshUntil() {
        return freshUntil;
    }

    int rcode() {
        return entry[messageAt + 3] & Wire.RCODE_MASK;
    }

    /** When it was built, from its upstream's answer. */
    long storedAt() {
        return storedAt;
    }

    /** Until when it may be served stale; its expiry when never. */
    long keepUntil() {
        return keepUntil;
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

    /** Serves it stale without asking an upstream until {@code until}, once kept again. */
    void recheckAt(long until) {
        recheckAt = until;
        LONG.set(entry, RECHECK_AT, until);
    }

    /**
     * Whether a hit at {@code now} asks the upstream again for this fresh answer (Unbound's
     * {@code prefetch}): it is in the last tenth of its lifetime, lives 10 s or longer, and no
     * prefetch was sent for it. A name asked that late is likely asked again: refreshed now, it
     * never expires while it is asked, and its clients never wait for a miss.
     */
    boolean prefetchDueAt(long now) {
        long lifetime = freshUntil - storedAt;
        return lifetime >= PREFETCH_MIN_LIFETIME_NANOS && freshUntil - now < lifetime / 10 && now - recheckAt >= 0;
    }

    /** A prefetch was sent for it: none again until it expires, once kept again. */
    void prefetchSent() {
        recheckAt(freshUntil);
    }

    /**
     * The upstream's message as kept, read in place (a wrapper, not a copy): for an answer cut for
     * UDP, which takes its header and OPT.
     */
    ByteBuf message() {
        return Unpooled.wrappedBuffer(entry, messageAt, messageLength);
    }

    /** Bytes {@link #write} writes. */
    int length(boolean stale) {
        return messageLength + (stale && optAt >= 0 ? EDE_OPTION_BYTES : 0);
    }

    /**
     * This answer for the query {@code view} has read: its ID and its question's letter case, the
     * TTLs counted down by the answer's age, or (stale) each 30 seconds with an Extended DNS Error
     * "Stale Answer" in its OPT.
     */
    ByteBuf write(ByteBufAllocator alloc, ByteBuf query, QueryView view, long now, boolean stale) {
        ByteBuf out = alloc.buffer(length(stale));
        try {
            return fill(out, query, view, now, stale);
        } catch (RuntimeException e) { // a bug: whoever catches it, the buffer must not leak
            out.release();
            throw e;
        }
    }

    private ByteBuf fill(ByteBuf out, ByteBuf query, QueryView view, long now, boolean stale) {
        int base = out.writerIndex();
        out.writeBytes(entry, messageAt, messageLength);
        out.setShort(base + Wire.ID_OFFSET, view.id());
        int nameLength = view.nameEnd() - view.nameStart();
        out.setBytes(base + Wire.HEADER_BYTES, query, view.nameStart(), nameLength);
        int records = base + Wire.HEADER_BYTES + nameLength + 4;
        if (Names.spelledOutAt(out, records)) { // names spelled out in the case of the client the answer was kept for
            Names.replaceCopies(out, records, entry, messageAt + Wire.HEADER_BYTES, nameLength, query, view.nameStart());
        }
        long age = Math.max(0, (now - storedAt) / 1_000_000_000L);
        for (int i = 0; i < ttlCount; i++) {
            int at = base + Short.toUnsignedInt((short) SHORT.get(entry, ttlsAt + 2 * i));
            long ttl = stale ? STALE_TTL : Math.max(0, out.getUnsignedInt(at) - age);
            out.setInt(at, (int) ttl);
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
