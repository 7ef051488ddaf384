package io.sluice.wire;

import io.netty.buffer.ByteBuf;

/**
 * Reads what a forwarding decision needs from a query, in place: the header and the one question.
 * After the question it only checks that the records the header counts are there, each whole (an
 * OPT's options too), as nsd and Unbound do before they answer: a query they would call FORMERR
 * gets FORMERR here too, and never an answer from the cache.
 *
 * <p>One instance per event loop, reused for every message: {@link #read} overwrites all fields.
 * Hand-written rather than Netty's {@code DnsQueryDecoder} or dnsjava's {@code Message}: both
 * decode every record of every section into objects, and a forwarder passes those sections through
 * untouched.
 */
public final class QueryView {

    /** What to do with a message, decided by {@link #read}. */
    public enum Check {
        /**
         * A well-formed standard query with one question, or with none and a COOKIE option (a
         * client asking for a server cookie, RFC 7873 section 5.4): see {@link #hasQuestion}.
         */
        QUERY,
        /** Not even a message ID: no answer is possible. */
        DROP_NO_ID,
        /** QR=1: a response sent to a server. Answering it could start an answer loop. */
        DROP_RESPONSE,
        /** Malformed: answer FORMERR. */
        FORMERR,
        /** An opcode other than QUERY: answer NOTIMP. */
        NOTIMP
    }

    private int base;
    private int length;
    private int id;
    private int flags;
    private int questionEnd;
    private boolean question;
    private int qtype;
    private int qclass;
    private int optAt;

    /** Reads the message between {@code buf.readerIndex()} and {@code buf.writerIndex()}. */
    public Check read(ByteBuf buf) {
        base = buf.readerIndex();
        length = buf.readableBytes();
        questionEnd = -1;
        question = false;
        optAt = -1;
        if (length < 2) {
            id = -1;
            flags = 0;
            return Check.DROP_NO_ID;
        }
        id = buf.getUnsignedShort(base + Wire.ID_OFFSET);
        flags = length >= 3 ? buf.getUnsignedByte(base + Wire.FLAGS_OFFSET) << 8 : 0;
        flags |= length >= 4 ? buf.getUnsignedByte(base + Wire.FLAGS_OFFSET + 1) : 0;
        // A response is never answered, however short: its QR bit is in the flags' first octet.
        if ((flags & Wire.FLAG_QR) != 0) {
            return Check.DROP_RESPONSE;
        }
        if (length < Wire.HEADER_BYTES) {
            return Check.FORMERR; // an ID to answer to: FORMERR, as the bad-input contract says
        }
        // Another opcode is NOTIMP, its question read when it has one, to be echoed as Unbound does.
        Check unlessRead = ((flags & Wire.OPCODE_MASK) >>> Wire.OPCODE_SHIFT) != Wire.OPCODE_QUERY
                ? Check.NOTIMP : Check.FORMERR;
        int end = base + length;
        int questions = buf.getUnsignedShort(base + Wire.QDCOUNT_OFFSET);
        if (questions == 0) {
            return unlessRead == Check.FORMERR && recordsFit(buf, base + Wire.HEADER_BYTES, end)
                    && asksForCookie(buf, end) ? Check.QUERY : unlessRead;
        }
        if (questions != 1) {
            return unlessRead;
        }
        int nameEnd = Names.skip(buf, base, base + Wire.HEADER_BYTES, end);
        if (nameEnd == Names.MALFORMED || nameEnd + 4 > end) {
            return unlessRead;
        }
        qtype = buf.getUnsignedShort(nameEnd);
        qclass = buf.getUnsignedShort(nameEnd + 2);
        questionEnd = nameEnd + 4;
        question = true;
        if (unlessRead == Check.NOTIMP) {
            return Check.NOTIMP;
        }
        return recordsFit(buf, questionEnd, end) ? Check.QUERY : Check.FORMERR;
    }

    /**
     * Whether the records the header counts follow {@code pos} whole, to at most {@code end}: each
     * name passes, each RDATA ends within the message, and an OPT's options end with its RDATA.
     * Names are passed, not followed: what they point at is the upstream's to judge. Notes where
     * an OPT record is ({@link #optAt}).
     */
    private boolean recordsFit(ByteBuf buf, int pos, int end) {
        int before = buf.getUnsignedShort(base + Wire.ANCOUNT_OFFSET) + buf.getUnsignedShort(base + Wire.NSCOUNT_OFFSET);
        int records = before + buf.getUnsignedShort(base + Wire.ARCOUNT_OFFSET);
        for (int i = 0; i < records; i++) {
            int namePos = pos;
            int nameEnd = Names.pass(buf, pos, end);
            if (nameEnd == Names.MALFORMED || nameEnd + 10 > end) {
                return false;
            }
            int rdata = nameEnd + 10;
            pos = rdata + buf.getUnsignedShort(nameEnd + 8);
            if (buf.getUnsignedShort(nameEnd) == Wire.TYPE_OPT) {
                if (pos > end || !Opt.optionsFit(buf, rdata, pos)) {
                    return false;
                }
                // the additional section's first OPT, whose owner is the root: one zero octet
                if (i >= before && nameEnd - 1 == namePos && optAt < 0) {
                    optAt = namePos;
                }
            } else if (pos > end) {
                return false;
            }
        }
        return true;
    }

    /** A question-less query is legitimate only as a request for a server cookie; after {@link #recordsFit}. */
    private boolean asksForCookie(ByteBuf buf, int end) {
        if (optAt < 0 || !Opt.hasOption(buf, optAt, end, Wire.EDNS_OPTION_COOKIE)) {
            return false;
        }
        questionEnd = base + Wire.HEADER_BYTES;
        qtype = -1;
        qclass = -1;
        return true;
    }

    /** Index of the message's first byte. */
    public int base() {
        return base;
    }

    public int length() {
        return length;
    }

    public int id() {
        return id;
    }

    public int flags() {
        return flags;
    }

    /** False for a question-less cookie query, whose name, type and class are not there. */
    public boolean hasQuestion() {
        return question;
    }

    /** Index of the question name, valid when {@link #hasQuestion}. */
    public int nameStart() {
        return base + Wire.HEADER_BYTES;
    }

    /** Index just past the question name's root label, valid when {@link #hasQuestion}. */
    public int nameEnd() {
        return questionEnd - 4;
    }

    /**
     * Index just past the question section (past QCLASS, or the header when there is no question),
     * or -1 if the message is not a {@link Check#QUERY}.
     */
    public int questionEnd() {
        return questionEnd;
    }

    /**
     * Index of the owner name of the query's OPT record, or -1 when it has none; valid when the
     * message is a {@link Check#QUERY}.
     */
    public int optAt() {
        return optAt;
    }

    /**
     * Whether the query has records besides one OPT: a signed one (TSIG, SIG(0)), whose signature
     * covers its every octet, or an odd one. What is changed in such a query breaks it upstream.
     */
    public boolean recordsBesidesOpt(ByteBuf buf) {
        int additional = buf.getUnsignedShort(base + Wire.ARCOUNT_OFFSET);
        return buf.getUnsignedShort(base + Wire.ANCOUNT_OFFSET) + buf.getUnsignedShort(base + Wire.NSCOUNT_OFFSET) > 0
                || additional > (optAt < 0 ? 0 : 1);
    }

    /** The UDP payload size the query's OPT offers (at least 512), or 512 without one. */
    public int udpPayload(ByteBuf buf) {
        return optAt < 0 ? QueryEdns.CLASSIC_UDP_PAYLOAD
                : Math.max(QueryEdns.CLASSIC_UDP_PAYLOAD, buf.getUnsignedShort(optAt + Opt.PAYLOAD_OFFSET));
    }

    /**
     * Removes {@code bytes} octets at {@code at} from the message this has read, in place: what
     * follows moves up and the message ends that much sooner. For what lies after the question
     * ({@link CookieOption#remove}); the fields read stay right.
     */
    void cut(ByteBuf buf, int at, int bytes) {
        Opt.cut(buf, at, bytes); // the message ends at the buffer's writer index: read says so
        length -= bytes;
    }

    public int qtype() {
        return qtype;
    }

    public int qclass() {
        return qclass;
    }
}
