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
    /** BADVERS (16) shifted right by the header's four RCODE bits: the OPT's extended RCODE byte. */
    private static final int BADVERS_HIGH_BITS = 1;
    /** RCODEs counted by name: the header's sixteen, and the extended ones up to BADCOOKIE (23). */
    public static final int COUNTED_RCODES = 24;
    /** The header's bits of BADCOOKIE (23, RFC 7873): YXRRSET's, which no answer to a query means. */
    private static final int BADCOOKIE_LOW_BITS = 7;

    /**
     * A header-only answer (QDCOUNT 0) for a query whose question could not be read or is not
     * for sluice to answer: FORMERR or NOTIMP. When the query's OPT record can be found (RFC 6891
     * section 7), so is the answer's, without options: never larger than the query.
     */
    public static ByteBuf headerOnly(ByteBufAllocator alloc, ByteBuf query, QueryView view, int rcode) {
        int end = view.base() + view.length();
        int optAt = -1;
        if (view.length() >= Wire.HEADER_BYTES) { // a shorter one has no sections, nor an OPT
            optAt = Opt.find(query, view.base(), end);
            if (optAt < 0) {
                optAt = Opt.findAtEnd(query, view.base(), end);
            }
        }
        boolean badVersion = badVersion(query, optAt);
        ByteBuf out = alloc.buffer(Wire.HEADER_BYTES + (optAt < 0 ? 0 : Opt.FIXED_BYTES));
        out.writeShort(view.id());
        out.writeShort(responseFlags(view.flags(), badVersion ? 0 : rcode));
        out.writeShort(0);
        out.writeShort(0);
        out.writeShort(0);
        out.writeShort(optAt < 0 ? 0 : 1);
        if (optAt >= 0) {
            writeOpt(out, query, optAt, badVersion, 0, null, 0);
        }
        return out;
    }

    /**
     * The RCODE of an answer made here, for counting: the header's, or {@link Wire#RCODE_BADVERS}
     * (16) for a BADVERS, whose header says 0 and whose OPT, then the message's last record (as
     * in every answer made here), carries the rest.
     */
    public static int rcode(ByteBuf answer) {
        int rcode = Wire.rcode(answer);
        if (rcode != 0 || answer.getUnsignedShort(answer.readerIndex() + Wire.ARCOUNT_OFFSET) == 0) {
            return rcode;
        }
        int optAt = Opt.find(answer, answer.readerIndex(), answer.writerIndex());
        return optAt >= 0 && answer.getUnsignedByte(optAt + 5) == BADVERS_HIGH_BITS ? Wire.RCODE_BADVERS : rcode;
    }

    /**
     * The RCODE of an upstream's answer to {@code query}, whose question ends at
     * {@code questionEnd}, for counting: the header's four bits, with the OPT's extension where an
     * answer relayed here may carry one: BADVERS (16, the header saying 0) to a query of an EDNS
     * version other than 0, and BADCOOKIE (23, the header saying YXRRSET). Only those answers are
     * walked to their OPT; an extension past {@link #COUNTED_RCODES} counts as the header says.
     */
    public static int relayedRcode(ByteBuf query, int questionEnd, ByteBuf answer) {
        int rcode = Wire.rcode(answer);
        boolean mayExtend = rcode == BADCOOKIE_LOW_BITS
                || rcode == 0 && badVersion(query, optAfterQuestion(query, questionEnd));
        if (!mayExtend) {
            return rcode;
        }
        int optAt = Opt.find(answer, answer.readerIndex(), answer.writerIndex());
        int full = optAt < 0 ? rcode : answer.getUnsignedByte(optAt + 5) << 4 | rcode;
        return full < COUNTED_RCODES ? full : rcode;
    }

    /** The index of a query's OPT when it follows the question, as a client's does; else -1. */
    private static int optAfterQuestion(ByteBuf query, int questionEnd) {
        int base = query.readerIndex();
        boolean optFollows = query.getUnsignedShort(base + Wire.ARCOUNT_OFFSET) > 0
                && query.getUnsignedShort(base + Wire.ANCOUNT_OFFSET) == 0
                && query.getUnsignedShort(base + Wire.NSCOUNT_OFFSET) == 0
                && questionEnd + Opt.FIXED_BYTES <= query.writerIndex()
                && query.getByte(questionEnd) == 0 && query.getUnsignedShort(questionEnd + 1) == Wire.TYPE_OPT;
        return optFollows ? questionEnd : -1;
    }

    /**
     * Whether the query's OPT record (at {@code optAt}, or none) is of an EDNS version other than
     * 0, the only one sluice implements: then every answer sluice makes itself is BADVERS (RFC
     * 6891 section 6.1.3), as Unbound's; answers from upstreams are theirs.
     */
    private static boolean badVersion(ByteBuf query, int optAt) {
        return optAt >= 0 && query.getUnsignedByte(optAt + 6) != 0;
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
        boolean badVersion = badVersion(query, optAt);
        if (badVersion) {
            rcode = 0; // BADVERS: its upper bits in the OPT, and no text about another RCODE
            text = null;
        }
        int optBytes = optAt < 0 ? 0 : Opt.FIXED_BYTES + (text == null ? 0 : EDE_HEADER_BYTES + textLength);
        ByteBuf out = headerAndQuestion(alloc, query, view,
                responseFlags(view.flags(), rcode) | (flags & (Wire.FLAG_RA | Wire.FLAG_TC)), optBytes);
        if (optAt >= 0) {
            writeOpt(out, query, optAt, badVersion, edeCode, text, textLength);
        }
        return out;
    }

    /**
     * The client's question under an upstream's {@code answer}'s header: what a client gets when
     * sluice cannot relay the answer itself. With {@code truncate}, an answer larger than a UDP
     * client takes (TC set, so that it asks again over TCP, as a UDP upstream would have told it);
     * without, an error header that counts a question it does not hold ({@link
     * Replies#questionMissing}). The upstream's flags stay (AA, RA, AD, the RCODE), and its OPT
     * record when it had one, with no option but its COOKIE: the answer is the upstream's, only
     * shorter. The ID
     * is the query's as {@code view} read it.
     */
    public static ByteBuf underUpstreamHeader(ByteBufAllocator alloc, ByteBuf query, QueryView view, ByteBuf answer,
                                              boolean truncate) {
        int base = answer.readerIndex();
        int optAt = answer.readableBytes() > Wire.HEADER_BYTES ? Opt.find(answer, base, answer.writerIndex()) : -1;
        int cookieAt = optAt < 0 ? -1 : Opt.optionAt(answer, optAt, answer.writerIndex(), Wire.EDNS_OPTION_COOKIE);
        int cookieBytes = cookieAt < 0 ? 0 : 4 + answer.getUnsignedShort(cookieAt + 2);
        ByteBuf out = headerAndQuestion(alloc, query, view,
                answer.getUnsignedShort(base + Wire.FLAGS_OFFSET) | (truncate ? Wire.FLAG_TC : 0),
                optAt < 0 ? 0 : Opt.FIXED_BYTES + cookieBytes);
        if (optAt >= 0) {
            out.writeBytes(answer, optAt, Opt.FIXED_BYTES - 2);
            out.writeShort(cookieBytes);
            out.writeBytes(answer, Math.max(cookieAt, 0), cookieBytes); // the client checks its cookie on every answer
        }
        return out;
    }

    /**
     * A buffer with room for {@code optBytes} more, holding the header (the query's ID,
     * {@code flags}, the question counted when there is one, an OPT counted when {@code optBytes}
     * is not 0) and the question of {@code view}'s query.
     */
    private static ByteBuf headerAndQuestion(ByteBufAllocator alloc, ByteBuf query, QueryView view, int flags,
                                             int optBytes) {
        int questionBytes = view.questionEnd() - view.nameStart();
        ByteBuf out = alloc.buffer(Wire.HEADER_BYTES + questionBytes + optBytes);
        out.writeShort(view.id());
        out.writeShort(flags);
        out.writeShort(view.hasQuestion() ? 1 : 0);
        out.writeShort(0);
        out.writeShort(0);
        out.writeShort(optBytes == 0 ? 0 : 1);
        out.writeBytes(query, view.nameStart(), questionBytes);
        return out;
    }

    /**
     * sluice's OPT record, version 0, the DO bit copied from the query's at {@code optAt}; the
     * extended RCODE of BADVERS (16) when {@code badVersion}; an EDE if {@code text}.
     */
    private static void writeOpt(ByteBuf out, ByteBuf query, int optAt, boolean badVersion, int edeCode, byte[] text,
                                 int textLength) {
        long queryTtl = query.getUnsignedInt(optAt + 5);
        out.writeByte(0);
        out.writeShort(Wire.TYPE_OPT);
        out.writeShort(ADVERTISED_UDP_PAYLOAD);
        out.writeInt((int) (queryTtl & Wire.OPT_TTL_DO) | (badVersion ? BADVERS_HIGH_BITS << 24 : 0));
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
