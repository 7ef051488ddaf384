package io.sluice.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;

/** Checks that an upstream's reply answers the query it claims to answer. */
public final class Replies {
    private Replies() {
    }

    /**
     * True when {@code reply} (between its reader and writer index) is a response to the query
     * sent: its single question has the query's name (case-insensitively), type and class. A reply
     * without a question answers too when the query had none (a cookie query), or when it reports
     * an error or truncation: servers answer a query they cannot parse (two OPT records, a bad
     * count) with a question-less FORMERR, REFUSED or NOTIMP, and relaying it at once, as dnsdist
     * does, is better than making the client wait for the timeout. So does an error reply whose
     * header counts a question it does not hold (nsd's bare 12-byte FORMERR to an IXFR without an
     * SOA): see {@link #questionMissing}.
     *
     * @param query       the query as sent, starting at {@code queryBase}
     * @param queryQEnd   index just past the query's question section
     */
    public static boolean answers(ByteBuf query, int queryBase, int queryQEnd, ByteBuf reply) {
        return answers(query, queryBase, queryQEnd, reply, false);
    }

    /**
     * As {@link #answers(ByteBuf, int, int, ByteBuf)}; with {@code exactCase} the reply's question
     * name must also have the case of the query's, byte for byte, as after {@link QuestionCase#scramble}.
     */
    public static boolean answers(ByteBuf query, int queryBase, int queryQEnd, ByteBuf reply, boolean exactCase) {
        int base = reply.readerIndex();
        int end = reply.writerIndex();
        if (end - base < Wire.HEADER_BYTES) {
            return false;
        }
        int flags = reply.getUnsignedShort(base + Wire.FLAGS_OFFSET);
        int questions = reply.getUnsignedShort(base + Wire.QDCOUNT_OFFSET);
        if ((flags & Wire.FLAG_QR) == 0) {
            return false;
        }
        if (questions == 0) {
            return queryQEnd - queryBase == Wire.HEADER_BYTES || reportsFailure(flags);
        }
        if (questions != 1 || queryQEnd - queryBase == Wire.HEADER_BYTES) {
            return false;
        }
        if (end - base == Wire.HEADER_BYTES) {
            return reportsFailure(flags) && (flags & Wire.RCODE_MASK) != 0;
        }
        // Upstreams echo the question byte for byte, so one bulk compare settles almost every reply.
        // A question name is never compressed (a pointer may only point back into the body, and
        // the first name starts the body), so equal bytes are the same name, type and class.
        int question = queryQEnd - (queryBase + Wire.HEADER_BYTES);
        if (end - base >= Wire.HEADER_BYTES + question
                && ByteBufUtil.equals(query, queryBase + Wire.HEADER_BYTES, reply, base + Wire.HEADER_BYTES, question)) {
            return true;
        }
        if (exactCase) {
            return false;
        }
        int nameEnd = Names.skip(reply, base, base + Wire.HEADER_BYTES, end);
        if (nameEnd == Names.MALFORMED || nameEnd + 4 > end) {
            return false;
        }
        return reply.getInt(nameEnd) == query.getInt(queryQEnd - 4)
                && Names.equalIgnoreCase(query, queryBase, queryBase + Wire.HEADER_BYTES,
                        reply, base, base + Wire.HEADER_BYTES);
    }

    /**
     * Whether {@code reply}, which {@link #answers} accepted, is a header alone that counts a
     * question: an error it reports about the query, which is relayed with the client's question
     * ({@link Answers#upstreamError}), as a header that counts what it lacks is no message.
     */
    public static boolean questionMissing(ByteBuf reply) {
        return reply.readableBytes() == Wire.HEADER_BYTES
                && reply.getUnsignedShort(reply.readerIndex() + Wire.QDCOUNT_OFFSET) != 0;
    }

    /**
     * True when {@code reply} can be a later message of the zone transfer the query asked for: a
     * response whose question section is empty or the query's (RFC 5936 section 2.2.1).
     */
    public static boolean continuesTransfer(ByteBuf query, int queryBase, int queryQEnd, ByteBuf reply) {
        int base = reply.readerIndex();
        return reply.writerIndex() - base >= Wire.HEADER_BYTES
                && (reply.getUnsignedShort(base + Wire.FLAGS_OFFSET) & Wire.FLAG_QR) != 0
                && (reply.getUnsignedShort(base + Wire.QDCOUNT_OFFSET) == 0
                        || answers(query, queryBase, queryQEnd, reply));
    }

    /** An error RCODE that says the query was not answered (FORMERR, SERVFAIL, NOTIMP, REFUSED), or TC. */
    private static boolean reportsFailure(int flags) {
        int rcode = flags & Wire.RCODE_MASK;
        return (flags & Wire.FLAG_TC) != 0 || rcode == Wire.RCODE_FORMERR || rcode == Wire.RCODE_SERVFAIL
                || rcode == Wire.RCODE_NOTIMP || rcode == Wire.RCODE_REFUSED;
    }
}
