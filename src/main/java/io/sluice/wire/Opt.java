package io.sluice.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * Finds a message's EDNS0 OPT record (RFC 6891) and its options. Only the answers sluice writes
 * itself, and a query without a question, need it: a forwarded query's OPT travels untouched.
 */
final class Opt {
    private Opt() {
    }

    /** Octets of an OPT record before its options: root owner, TYPE, CLASS, TTL, RDLENGTH. */
    static final int FIXED_BYTES = 11;
    /** Where an OPT record's UDP payload size (its CLASS field) is, from its owner name. */
    static final int PAYLOAD_OFFSET = 3;

    /**
     * Returns the index of the OPT record's owner name in the additional section of the message
     * between {@code base} and {@code end}, or -1 when there is none or the message is malformed
     * before it.
     */
    static int find(ByteBuf buf, int base, int end) {
        int pos = Names.skipQuestions(buf, base, end);
        return pos == Names.MALFORMED ? -1 : find(buf, base, end, pos);
    }

    /** As {@link #find(ByteBuf, int, int)}, with the question section known to end at {@code pos}. */
    static int find(ByteBuf buf, int base, int end, int pos) {
        int before = buf.getUnsignedShort(base + Wire.ANCOUNT_OFFSET)
                + buf.getUnsignedShort(base + Wire.NSCOUNT_OFFSET);
        int additional = buf.getUnsignedShort(base + Wire.ARCOUNT_OFFSET);
        for (int i = 0; i < before + additional; i++) {
            int nameEnd = Names.pass(buf, pos, end);
            if (nameEnd == Names.MALFORMED || nameEnd + 10 > end) {
                return -1;
            }
            if (i >= before && buf.getUnsignedShort(nameEnd) == Wire.TYPE_OPT) {
                return nameEnd - 1 == pos ? pos : -1; // an OPT owner is the root, one zero octet
            }
            pos = nameEnd + 10 + buf.getUnsignedShort(nameEnd + 8);
        }
        return -1;
    }

    /**
     * For a message whose sections cannot be walked (a QDCOUNT larger than its questions, say):
     * the index of an OPT record that ends the message exactly, as a client's OPT does, or -1. So
     * that its FORMERR still carries an OPT (RFC 6891 section 7). Looks only at offsets an OPT's
     * RDLENGTH can reach from the end: at most 64 KiB, on the FORMERR path alone.
     */
    static int findAtEnd(ByteBuf buf, int base, int end) {
        for (int at = end - FIXED_BYTES; at >= base + Wire.HEADER_BYTES; at--) {
            if (buf.getByte(at) == 0 && buf.getUnsignedShort(at + 1) == Wire.TYPE_OPT
                    && at + FIXED_BYTES + buf.getUnsignedShort(at + 9) == end) {
                return at;
            }
            if (end - at > FIXED_BYTES + 0xFFFF) {
                break;
            }
        }
        return -1;
    }

    /** Whether the options of an OPT record's RDATA {@code [pos, end)} end exactly at its end. */
    static boolean optionsFit(ByteBuf buf, int pos, int end) {
        while (pos + 4 <= end) {
            pos += 4 + buf.getUnsignedShort(pos + 2);
        }
        return pos == end;
    }

    /**
     * {@code answer} with the option {@code option[0, length)} (code, length, data) in place of its
     * own of that code, if any: in place when that one has the same length, or when the OPT record
     * is last (as an answer's is) and the buffer has room; else a new buffer, whose reference the
     * caller owns besides {@code answer}'s. An answer without an OPT record gets one offering
     * {@code payload} octets when {@code payload} is above 0, and is left as it is otherwise; one
     * whose OPT record or options run past its end is left as it is.
     */
    static ByteBuf put(ByteBufAllocator alloc, ByteBuf answer, byte[] option, int length, int payload) {
        int base = answer.readerIndex();
        int end = answer.writerIndex();
        int optAt = end - base > Wire.HEADER_BYTES ? find(answer, base, end) : -1;
        if (optAt < 0) {
            if (payload <= 0) {
                return answer;
            }
            ByteBuf out = answer.maxWritableBytes() >= FIXED_BYTES + length ? answer
                    : alloc.buffer(end - base + FIXED_BYTES + length).writeBytes(answer, base, end - base);
            int outBase = out.readerIndex();
            out.setShort(outBase + Wire.ARCOUNT_OFFSET, out.getUnsignedShort(outBase + Wire.ARCOUNT_OFFSET) + 1);
            out.writeByte(0);
            out.writeShort(Wire.TYPE_OPT);
            out.writeShort(payload);
            out.writeInt(0);
            out.writeShort(length);
            out.writeBytes(option, 0, length);
            return out;
        }
        int rdLengthAt = optAt + FIXED_BYTES - 2;
        int rdataEnd = optAt + FIXED_BYTES + answer.getUnsignedShort(rdLengthAt);
        if (rdataEnd > end || !optionsFit(answer, optAt + FIXED_BYTES, rdataEnd)) {
            return answer; // an OPT record that runs past the message: no place to put an option in
        }
        int existing = optionAt(answer, optAt, end, (option[0] & 0xFF) << 8 | option[1] & 0xFF);
        if (existing >= 0) {
            int dropped = 4 + answer.getUnsignedShort(existing + 2);
            if (dropped == length) {
                answer.setBytes(existing, option, 0, length);
                return answer;
            }
            answer.setShort(rdLengthAt, answer.getUnsignedShort(rdLengthAt) - dropped);
            cut(answer, existing, dropped);
            end -= dropped;
            rdataEnd -= dropped;
        }
        int rdLength = answer.getUnsignedShort(rdLengthAt) + length;
        if (rdataEnd == end && answer.maxWritableBytes() >= length) {
            answer.setShort(rdLengthAt, rdLength);
            return answer.writeBytes(option, 0, length);
        }
        // records after the OPT (a TSIG), or a full buffer: copied
        ByteBuf out = alloc.buffer(end - base + length).writeBytes(answer, base, rdataEnd - base);
        out.writeBytes(option, 0, length);
        out.writeBytes(answer, rdataEnd, end - rdataEnd);
        out.setShort(out.readerIndex() + rdLengthAt - base, rdLength);
        return out;
    }

    /** Removes {@code bytes} octets at {@code at} from {@code message}, which ends at its writer index, in place. */
    static void cut(ByteBuf message, int at, int bytes) {
        int end = message.writerIndex();
        for (int i = at + bytes; i < end; i++) { // forward, byte by byte: the ranges overlap
            message.setByte(i - bytes, message.getByte(i));
        }
        message.writerIndex(end - bytes);
    }

    /**
     * Whether no option {@code code} follows the option at {@code at} in the OPT record at
     * {@code optAt} of the message ending at {@code end}: a second COOKIE or Client Subnet would be
     * a question of which to answer, and would go upstream unseen.
     */
    static boolean noneAfter(ByteBuf buf, int optAt, int end, int at, int code) {
        int rdataEnd = Math.min(end, optAt + FIXED_BYTES + buf.getUnsignedShort(optAt + 9));
        for (int pos = at + 4 + buf.getUnsignedShort(at + 2); pos + 4 <= rdataEnd; pos += 4 + buf.getUnsignedShort(pos + 2)) {
            if (buf.getUnsignedShort(pos) == code) {
                return false;
            }
        }
        return true;
    }

    /** True when the OPT record at {@code optAt} (from {@link #find}) carries option {@code code}. */
    static boolean hasOption(ByteBuf buf, int optAt, int end, int code) {
        return optionAt(buf, optAt, end, code) >= 0;
    }

    /**
     * The index of the first option {@code code} in the OPT record at {@code optAt} (from
     * {@link #find}): its two-byte code, then its length, then its data. -1 when it has none.
     */
    static int optionAt(ByteBuf buf, int optAt, int end, int code) {
        int pos = optAt + FIXED_BYTES;
        int rdataEnd = Math.min(end, pos + buf.getUnsignedShort(optAt + 9));
        while (pos + 4 <= rdataEnd) {
            if (buf.getUnsignedShort(pos) == code) {
                return pos;
            }
            pos += 4 + buf.getUnsignedShort(pos + 2);
        }
        return -1;
    }
}
