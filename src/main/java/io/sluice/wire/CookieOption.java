package io.sluice.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * The DNS COOKIE option (RFC 7873) on the wire: found in a query, taken out of it, and put in an
 * answer. A cookie's parts are handed around as big-endian longs of their octets as they stand on
 * the wire: the client cookie (8 octets), then a server cookie of RFC 9018's form (16 octets: its
 * version, reserved octets and timestamp, then its hash).
 */
public final class CookieOption {
    /** Octets of a client cookie. */
    public static final int CLIENT_BYTES = 8;
    /** Octets of the option's data sluice writes: the client cookie and a server cookie of RFC 9018's form. */
    public static final int SENT_BYTES = CLIENT_BYTES + 16;
    /** Octets the option sluice writes takes: its code and length, then its data. */
    public static final int OPTION_BYTES = 4 + SENT_BYTES;
    private static final int MIN_SERVER_BYTES = 8;
    private static final int MAX_SERVER_BYTES = 32;

    private CookieOption() {
    }

    /**
     * The index of the COOKIE option (its code) of the query {@code view} has read from
     * {@code buf}, or -1 when it has none.
     */
    public static int find(ByteBuf buf, QueryView view) {
        int optAt = view.optAt();
        return optAt < 0 ? -1 : Opt.optionAt(buf, optAt, view.base() + view.length(), Wire.EDNS_OPTION_COOKIE);
    }

    /** The length of the option data at {@code at} (from {@link #find}). */
    public static int dataLength(ByteBuf buf, int at) {
        return buf.getUnsignedShort(at + 2);
    }

    /**
     * Whether option data of {@code length} octets is a cookie: a client cookie alone, or with a
     * server cookie of 8 to 32 octets (RFC 7873 section 4). Another length is FORMERR (section 5.2.2).
     */
    public static boolean wellFormed(int length) {
        return length == CLIENT_BYTES
                || length >= CLIENT_BYTES + MIN_SERVER_BYTES && length <= CLIENT_BYTES + MAX_SERVER_BYTES;
    }

    /**
     * Whether the option at {@code at} (from {@link #find}) is the query's only COOKIE: a second
     * one would be a question of which to answer, and would go upstream; it is FORMERR too.
     */
    public static boolean alone(ByteBuf buf, QueryView view, int at) {
        return Opt.noneAfter(buf, view.optAt(), view.base() + view.length(), at, Wire.EDNS_OPTION_COOKIE);
    }

    /** The client cookie of the option at {@code at}. */
    public static long client(ByteBuf buf, int at) {
        return buf.getLong(at + 4);
    }

    /**
     * Takes the option at {@code at} out of the query {@code view} has read from {@code buf}, in
     * place: its OPT record is that much shorter, and so is the message.
     */
    public static void remove(ByteBuf buf, QueryView view, int at) {
        int removed = 4 + dataLength(buf, at);
        int rdLength = view.optAt() + Opt.FIXED_BYTES - 2;
        buf.setShort(rdLength, buf.getUnsignedShort(rdLength) - removed);
        view.cut(buf, at, removed);
    }

    /**
     * {@code answer} with a COOKIE option of {@code client} and the server cookie
     * {@code serverHead} (version, reserved, timestamp), {@code serverHash}, in place of any it
     * had: the same buffer when it had room (its OPT record last, as an answer's is), else a new
     * one, whose reference the caller owns besides {@code answer}'s. An answer without an OPT
     * record gets one; one whose OPT record or options run past its end is left as it is.
     */
    public static ByteBuf put(ByteBufAllocator alloc, ByteBuf answer, long client, long serverHead, long serverHash) {
        int base = answer.readerIndex();
        int end = answer.writerIndex();
        int optAt = end - base > Wire.HEADER_BYTES ? Opt.find(answer, base, end) : -1;
        if (optAt < 0) {
            ByteBuf out = answer.maxWritableBytes() >= Opt.FIXED_BYTES + OPTION_BYTES ? answer
                    : alloc.buffer(end - base + Opt.FIXED_BYTES + OPTION_BYTES).writeBytes(answer, base, end - base);
            int outBase = out.readerIndex();
            out.setShort(outBase + Wire.ARCOUNT_OFFSET, out.getUnsignedShort(outBase + Wire.ARCOUNT_OFFSET) + 1);
            out.writeByte(0);
            out.writeShort(Wire.TYPE_OPT);
            out.writeShort(Answers.ADVERTISED_UDP_PAYLOAD);
            out.writeInt(0);
            out.writeShort(OPTION_BYTES);
            write(out, client, serverHead, serverHash);
            return out;
        }
        int rdata = optAt + Opt.FIXED_BYTES;
        int rdLength = answer.getUnsignedShort(optAt + Opt.FIXED_BYTES - 2);
        int rdataEnd = rdata + rdLength;
        int existing = Opt.optionAt(answer, optAt, end, Wire.EDNS_OPTION_COOKIE);
        if (rdataEnd > end || !Opt.optionsFit(answer, rdata, rdataEnd)) {
            return answer; // an OPT record that runs past the message: no place to put a cookie in
        }
        if (existing >= 0 && dataLength(answer, existing) == SENT_BYTES) {
            answer.setLong(existing + 4, client);
            answer.setLong(existing + 4 + CLIENT_BYTES, serverHead);
            answer.setLong(existing + 4 + CLIENT_BYTES + 8, serverHash);
            return answer;
        }
        if (existing < 0 && rdataEnd == end && answer.maxWritableBytes() >= OPTION_BYTES) {
            answer.setShort(optAt + Opt.FIXED_BYTES - 2, rdLength + OPTION_BYTES);
            write(answer, client, serverHead, serverHash);
            return answer;
        }
        // Another cookie to drop, or records after the OPT (a TSIG), or a full buffer: copied.
        int dropped = existing < 0 ? 0 : 4 + dataLength(answer, existing);
        ByteBuf out = alloc.buffer(end - base - dropped + OPTION_BYTES);
        int cut = existing < 0 ? rdataEnd : existing;
        out.writeBytes(answer, base, cut - base);
        out.writeBytes(answer, cut + dropped, rdataEnd - cut - dropped);
        write(out, client, serverHead, serverHash);
        out.writeBytes(answer, rdataEnd, end - rdataEnd);
        out.setShort(out.readerIndex() + optAt - base + Opt.FIXED_BYTES - 2, rdLength - dropped + OPTION_BYTES);
        return out;
    }

    private static void write(ByteBuf out, long client, long serverHead, long serverHash) {
        out.writeShort(Wire.EDNS_OPTION_COOKIE);
        out.writeShort(SENT_BYTES);
        out.writeLong(client);
        out.writeLong(serverHead);
        out.writeLong(serverHash);
    }
}
