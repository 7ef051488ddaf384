package io.sluice.wire;

import io.netty.buffer.ByteBuf;

/**
 * What an answer cache needs to know of a reply's records, read in one walk: where each TTL is
 * (to count it down), the smallest of them, the negative-caching TTL of its SOA (RFC 2308 section
 * 5: the smaller of the SOA record's TTL and its MINIMUM field), and where its OPT record is.
 *
 * <p>One instance per event loop, reused: {@link #read} overwrites every field.
 */
public final class ReplyRecords {
    /** Records a reply may have and still be read; a larger one is not cached. */
    public static final int MAX_RECORDS = 256;
    /** TYPE of a SIG or TSIG record: a signed reply is for one client only. */
    private static final int TYPE_SIG = 24;
    private static final int TYPE_TSIG = 250;
    private static final int TYPE_ANY = 255;

    private final int[] ttlAt = new int[MAX_RECORDS];
    private int ttls;
    private long minTtl;
    private long negativeTtl;
    private int optAt;
    private int extendedRcode;
    private int questionNameEnd;
    private int answersOfType;

    /**
     * Reads the reply between {@code buf}'s reader and writer index. False when it is not one a
     * cache can keep: malformed, not exactly one question, more than {@link #MAX_RECORDS} records,
     * signed, or an OPT record that is not its last record (options are rewritten in place there).
     */
    public boolean read(ByteBuf buf) {
        int base = buf.readerIndex();
        int end = buf.writerIndex();
        ttls = 0;
        minTtl = Long.MAX_VALUE;
        negativeTtl = -1;
        optAt = -1;
        extendedRcode = 0;
        answersOfType = 0;
        if (end - base < Wire.HEADER_BYTES || buf.getUnsignedShort(base + Wire.QDCOUNT_OFFSET) != 1) {
            return false;
        }
        questionNameEnd = Names.skip(buf, base, base + Wire.HEADER_BYTES, end);
        if (questionNameEnd == Names.MALFORMED || questionNameEnd + 4 > end) {
            return false;
        }
        int answers = buf.getUnsignedShort(base + Wire.ANCOUNT_OFFSET);
        int authority = buf.getUnsignedShort(base + Wire.NSCOUNT_OFFSET);
        int records = answers + authority + buf.getUnsignedShort(base + Wire.ARCOUNT_OFFSET);
        if (records > MAX_RECORDS) {
            return false;
        }
        int qtype = buf.getUnsignedShort(questionNameEnd);
        int pos = questionNameEnd + 4;
        for (int i = 0; i < records; i++) {
            int nameEnd = Names.skip(buf, base, pos, end);
            if (nameEnd == Names.MALFORMED || nameEnd + 10 > end) {
                return false;
            }
            int type = buf.getUnsignedShort(nameEnd);
            int rdata = nameEnd + 10;
            int next = rdata + buf.getUnsignedShort(nameEnd + 8);
            if (next > end || type == TYPE_SIG || type == TYPE_TSIG) {
                return false;
            }
            if (i < answers && (type == qtype || qtype == TYPE_ANY)) {
                answersOfType++;
            }
            if (type == Wire.TYPE_OPT) {
                if (i < answers + authority || i != records - 1 || nameEnd != pos + 1 || !Opt.optionsFit(buf, rdata, next)) {
                    return false;
                }
                optAt = pos;
                extendedRcode = buf.getUnsignedByte(nameEnd + 4);
            } else {
                long ttl = buf.getUnsignedInt(nameEnd + 4);
                if (ttl > Integer.MAX_VALUE) {
                    ttl = 0; // RFC 2181 section 8: a TTL with the top bit set is taken as zero
                }
                ttlAt[ttls++] = nameEnd + 4 - base;
                minTtl = Math.min(minTtl, ttl);
                if (type == Wire.TYPE_SOA && i >= answers && i < answers + authority && next - rdata >= 20) {
                    long minimum = buf.getUnsignedInt(next - 4);
                    negativeTtl = Math.min(ttl, minimum);
                }
            }
            pos = next;
        }
        if (pos != end) {
            return false; // trailing bytes: not a message this reader understands
        }
        if (minTtl == Long.MAX_VALUE) {
            minTtl = 0;
        }
        return true;
    }

    /**
     * The reply {@link #read} has just read, as bytes to keep for every client: its OPT record
     * with no option but Extended DNS Errors (RFC 8914), which are about the answer, and Client
     * Subnet (RFC 7871), whose network every query that shares the answer named ({@link AnswerKey})
     * and whose scope is about the answer. The others
     * belong to the one client, or the one connection, it was for: a COOKIE (RFC 7873), PADDING
     * (RFC 7830), an NSID the client asked for (RFC 5001: never sent to one that did not), a TCP
     * keepalive (RFC 7828, meaningless over UDP), and any the forwarder does not know. Unbound
     * keeps none either. Everything else, offsets included, stays as it was. Copied into {@code out} at {@code at}:
     * their length, or -1 when they do not fit.
     */
    public int copyToKeep(ByteBuf buf, byte[] out, int at) {
        int base = buf.readerIndex();
        int end = buf.writerIndex();
        int kept = end - base;
        if (optAt >= 0) {
            int options = optAt + Opt.FIXED_BYTES;
            kept = options - base;
            for (int pos = options; pos < end; pos += 4 + buf.getUnsignedShort(pos + 2)) {
                if (keptOption(buf.getUnsignedShort(pos))) {
                    kept += 4 + buf.getUnsignedShort(pos + 2);
                }
            }
        }
        if (kept > out.length - at) {
            return -1;
        }
        if (optAt < 0) {
            buf.getBytes(base, out, at, kept);
            return kept;
        }
        int options = optAt + Opt.FIXED_BYTES;
        buf.getBytes(base, out, at, options - base);
        int to = at + options - base;
        for (int pos = options; pos < end; pos += 4 + buf.getUnsignedShort(pos + 2)) {
            if (keptOption(buf.getUnsignedShort(pos))) {
                int n = 4 + buf.getUnsignedShort(pos + 2);
                buf.getBytes(pos, out, to, n);
                to += n;
            }
        }
        int rdLength = kept - (options - base);
        out[at + optAt - base + 9] = (byte) (rdLength >>> 8);
        out[at + optAt - base + 10] = (byte) rdLength;
        return kept;
    }

    private static boolean keptOption(int code) {
        return code == Wire.EDNS_OPTION_EDE || code == QueryEdns.OPTION_CLIENT_SUBNET;
    }

    /** How many TTLs {@link #ttlOffsets} holds. */
    public int ttlCount() {
        return ttls;
    }

    /** Offsets from the message's first byte of the TTL field of every record but the OPT. */
    public int[] ttlOffsets() {
        return ttlAt;
    }

    /**
     * Answer records of the question's type (any, for ANY): none in a NOERROR reply is NODATA,
     * though a CNAME chain may lead to it.
     */
    public int answersOfType() {
        return answersOfType;
    }

    /** The smallest TTL of the records but the OPT, in seconds; 0 when there are none. */
    public long minTtl() {
        return minTtl;
    }

    /** The negative-caching TTL of the authority section's SOA, in seconds, or -1 without one. */
    public long negativeTtl() {
        return negativeTtl;
    }

    /** Index of the OPT record (the last record), or -1. */
    public int optAt() {
        return optAt;
    }

    /** The upper eight bits of the RCODE from the OPT record (RFC 6891): BADVERS and beyond; 0 without one. */
    public int extendedRcode() {
        return extendedRcode;
    }

    /** Index just past the question's name. */
    public int questionNameEnd() {
        return questionNameEnd;
    }
}
