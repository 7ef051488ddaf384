package io.sluice.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;

/** Checks that an upstream's reply answers the query it claims to answer. */
public final class Replies {
    private Replies() {
    }

    /**
     * True when {@code reply} (between its reader and writer index) is a response whose single
     * question has the query's name (case-insensitively), type and class.
     *
     * @param query       the query as sent, starting at {@code queryBase}
     * @param queryQEnd   index just past the query's QCLASS
     */
    public static boolean answersQuestion(ByteBuf query, int queryBase, int queryQEnd, ByteBuf reply) {
        int base = reply.readerIndex();
        int end = reply.writerIndex();
        if (end - base < Wire.HEADER_BYTES
                || (reply.getUnsignedShort(base + Wire.FLAGS_OFFSET) & Wire.FLAG_QR) == 0
                || reply.getUnsignedShort(base + Wire.QDCOUNT_OFFSET) != 1) {
            return false;
        }
        // Upstreams echo the question byte for byte, so one bulk compare settles almost every reply.
        // A question name is never compressed (a pointer may only point back into the body, and
        // the first name starts the body), so equal bytes are the same name, type and class.
        int question = queryQEnd - (queryBase + Wire.HEADER_BYTES);
        if (end - base >= Wire.HEADER_BYTES + question
                && ByteBufUtil.equals(query, queryBase + Wire.HEADER_BYTES, reply, base + Wire.HEADER_BYTES, question)) {
            return true;
        }
        int nameEnd = Names.skip(reply, base, base + Wire.HEADER_BYTES, end);
        if (nameEnd == Names.MALFORMED || nameEnd + 4 > end) {
            return false;
        }
        return reply.getInt(nameEnd) == query.getInt(queryQEnd - 4)
                && Names.equalIgnoreCase(query, queryBase, queryBase + Wire.HEADER_BYTES,
                        reply, base, base + Wire.HEADER_BYTES);
    }
}
