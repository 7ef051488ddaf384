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

    private static final int EDE_HEADER_BYTES = 6;

    /**
     * A header-only answer (QDCOUNT 0) for a query whose question could not be read or is not
     * for sluice to answer: FORMERR or NOTIMP. When the query's OPT record can be found (RFC 6891
     * section 7), so is the answer's, without options: never larger than the query.
     */
    public static ByteBuf headerOnly(ByteBufAllocator alloc, ByteBuf query, QueryView view, int rcode) {
        int optAt = view.length() < Wire.HEADER_BYTES ? -1 : Opt.find(query, view.base(), view.base() + view.length());
        ByteBuf out = alloc.buffer(Wire.HEADER_BYTES + (optAt < 0 ? 0 : Opt.FIXED_BYTES));
        out.writeShort(view.id());
        out.writeShort(responseFlags(view.flags(), rcode));
        out.writeShort(0);
        out.writeShort(0);
        out.writeShort(0);
        out.writeShort(optAt < 0 ? 0 : 1);
        if (optAt >= 0) {
            writeOpt(out, query, optAt, 0, null, 0);
        }
        return out;
    }

    /**
     * An answer that echoes the question of {@code view}'s query (none for a question-less one),
     * with {@code rcode}, the header flags {@code flags} (RA, TC) and no records. When the query
     * carried an OPT record, so does the answer (DO bit copied), with an Extended DNS Error when
     * {@code text} is not null.
     */
    public static ByteBuf withQuestion(ByteBufAllocator alloc, ByteBuf query, QueryView view, int flags,
                                       int rcode, int edeCode, byte[] text) {
        return withQuestion(alloc, query, view, flags, rcode, edeCode, text, text == null ? 0 : text.length);
    }

    /** {@link #withQuestion}, the text being {@code text[0, textLength)}. */
    public static ByteBuf withQuestion(ByteBufAllocator alloc, ByteBuf query, QueryView view, int flags,
                                       int rcode, int edeCode, byte[] text, int textLength) {
        int optAt = Opt.find(query, view.base(), view.base() + view.length(), view.questionEnd());
        int questionBytes = view.questionEnd() - view.nameStart();
        int optBytes = optAt < 0 ? 0 : Opt.FIXED_BYTES + (text == null ? 0 : EDE_HEADER_BYTES + textLength);
        ByteBuf out = alloc.buffer(Wire.HEADER_BYTES + questionBytes + optBytes);
        out.writeShort(view.id());
        out.writeShort(responseFlags(view.flags(), rcode) | (flags & (Wire.FLAG_RA | Wire.FLAG_TC)));
        out.writeShort(view.hasQuestion() ? 1 : 0);
        out.writeShort(0);
        out.writeShort(0);
        out.writeShort(optAt < 0 ? 0 : 1);
        out.writeBytes(query, view.nameStart(), questionBytes);
        if (optAt >= 0) {
            writeOpt(out, query, optAt, edeCode, text, textLength);
        }
        return out;
    }

    /** sluice's OPT record, the DO bit copied from the query's at {@code optAt}; an EDE if {@code text}. */
    private static void writeOpt(ByteBuf out, ByteBuf query, int optAt, int edeCode, byte[] text, int textLength) {
        long queryTtl = query.getUnsignedInt(optAt + 5);
        out.writeByte(0);
        out.writeShort(Wire.TYPE_OPT);
        out.writeShort(ADVERTISED_UDP_PAYLOAD);
        out.writeInt((int) (queryTtl & Wire.OPT_TTL_DO));
        if (text == null) {
            out.writeShort(0);
        } else {
            out.writeShort(EDE_HEADER_BYTES + textLength);
            out.writeShort(Wire.EDNS_OPTION_EDE);
            out.writeShort(2 + textLength);
            out.writeShort(edeCode);
            out.writeBytes(text, 0, textLength);
        }
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
