package io.sluice.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;

/**
 * The answers sluice writes itself, never larger than the query plus an OPT record: a refusal must
 * not be usable for amplification.
 *
 * <p>All of them copy ID, opcode, RD and CD from the query and set QR. They carry no records.
 */
public final class Answers {
    private Answers() {
    }

    /** UDP payload size sluice advertises in the OPT records it writes (DNS flag day 2020). */
    public static final int ADVERTISED_UDP_PAYLOAD = 1232;

    /** EDE info codes (RFC 8914 section 4) sluice uses. */
    public static final int EDE_OTHER = 0;
    public static final int EDE_NO_REACHABLE_AUTHORITY = 22;

    private static final int OPT_FIXED_BYTES = 11;
    private static final int EDE_HEADER_BYTES = 6;

    /**
     * A header-only answer (QDCOUNT 0) for a query whose question could not be read: FORMERR or
     * NOTIMP. {@code flags} is whatever part of the flags word the query had.
     */
    public static ByteBuf headerOnly(ByteBufAllocator alloc, int id, int flags, int rcode) {
        ByteBuf out = alloc.buffer(Wire.HEADER_BYTES);
        out.writeShort(id);
        out.writeShort(responseFlags(flags, rcode));
        out.writeZero(8);
        return out;
    }

    /**
     * An answer that echoes the question of {@code view}'s query, with {@code rcode}, the header
     * flags {@code flags} (RA, TC) and no records. When the query carried an OPT record, so does
     * the answer (DO bit copied), with an Extended DNS Error when {@code text} is not null.
     */
    public static ByteBuf withQuestion(ByteBufAllocator alloc, ByteBuf query, QueryView view, int flags,
                                       int rcode, int edeCode, byte[] text) {
        int optAt = Opt.find(query, view);
        int questionBytes = view.questionEnd() - view.nameStart();
        int optBytes = optAt < 0 ? 0 : OPT_FIXED_BYTES + (text == null ? 0 : EDE_HEADER_BYTES + text.length);
        ByteBuf out = alloc.buffer(Wire.HEADER_BYTES + questionBytes + optBytes);
        out.writeShort(view.id());
        out.writeShort(responseFlags(view.flags(), rcode) | (flags & (Wire.FLAG_RA | Wire.FLAG_TC)));
        out.writeShort(1);
        out.writeShort(0);
        out.writeShort(0);
        out.writeShort(optAt < 0 ? 0 : 1);
        out.writeBytes(query, view.nameStart(), questionBytes);
        if (optAt >= 0) {
            long queryTtl = query.getUnsignedInt(optAt + 5);
            out.writeByte(0);
            out.writeShort(Wire.TYPE_OPT);
            out.writeShort(ADVERTISED_UDP_PAYLOAD);
            out.writeInt((int) (queryTtl & Wire.OPT_TTL_DO));
            if (text == null) {
                out.writeShort(0);
            } else {
                out.writeShort(EDE_HEADER_BYTES + text.length);
                out.writeShort(Wire.EDNS_OPTION_EDE);
                out.writeShort(2 + text.length);
                out.writeShort(edeCode);
                out.writeBytes(text);
            }
        }
        return out;
    }

    static int responseFlags(int queryFlags, int rcode) {
        int kept = queryFlags & (Wire.OPCODE_MASK | Wire.FLAG_RD | Wire.FLAG_CD);
        return Wire.FLAG_QR | kept | (rcode & Wire.RCODE_MASK);
    }

    /** ASCII bytes of an Extended DNS Error text, for constants. */
    public static byte[] text(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
