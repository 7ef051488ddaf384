package io.sluice.wire;

import io.netty.buffer.ByteBuf;

/**
 * Follows the messages of one zone transfer (AXFR, RFC 5936; IXFR, RFC 1995) over TCP to find its
 * last: a transfer is a stream of messages that opens with the zone's SOA and closes with the same
 * SOA again, and a forwarder relays every message until then. Reused for every transfer its
 * in-flight slot carries: {@link #start} resets it.
 *
 * <p>The end, by what the answer records say: an AXFR, or an IXFR answered with the whole zone,
 * ends at the first repetition of the opening SOA's serial. An IXFR answered with differences
 * (its second record is an SOA too) repeats the new serial once more, at the start of the last
 * additions, and ends at the second. An IXFR answered by one SOA alone, no newer than the serial
 * the client sent (it is up to date), ends there; a lone SOA newer than that opens a transfer whose
 * records follow in later messages. An error RCODE, a message without answers or one that cannot be read ends it too:
 * nothing sensible can follow.
 */
public final class ZoneTransfer {
    private boolean incremental;
    /** The serial of the SOA in an IXFR query's authority section, or -1. */
    private long clientSerial;
    private boolean differences;
    private long openingSerial;
    private int records;
    private int closingSoas;

    /** True for the query types that start a transfer. */
    public static boolean isTransfer(int qtype) {
        return qtype == Wire.TYPE_AXFR || qtype == Wire.TYPE_IXFR;
    }

    /** Starts following the transfer that {@code view}'s query (in {@code query}) asks for. */
    public void start(ByteBuf query, QueryView view) {
        incremental = view.qtype() == Wire.TYPE_IXFR;
        clientSerial = incremental ? authoritySerial(query, view) : -1;
        differences = false;
        openingSerial = -1;
        records = 0;
        closingSoas = 0;
    }

    /** Reads the next message of the transfer; true when it is the last. */
    public boolean isLast(ByteBuf message) {
        int base = message.readerIndex();
        int end = message.writerIndex();
        if (end - base < Wire.HEADER_BYTES || Wire.rcode(message) != Wire.RCODE_NOERROR) {
            return true;
        }
        int pos = Names.skipQuestions(message, base, end);
        if (pos == Names.MALFORMED) {
            return true;
        }
        int answers = message.getUnsignedShort(base + Wire.ANCOUNT_OFFSET);
        if (answers == 0) {
            return true;
        }
        for (int i = 0; i < answers; i++) {
            int nameEnd = Names.skip(message, base, pos, end);
            if (nameEnd == Names.MALFORMED || nameEnd + 10 > end) {
                return true;
            }
            int rdata = nameEnd + 10;
            int next = rdata + message.getUnsignedShort(nameEnd + 8);
            if (next > end) {
                return true;
            }
            if (message.getUnsignedShort(nameEnd) == Wire.TYPE_SOA) {
                long serial = soaSerial(message, base, rdata, next);
                if (serial < 0) {
                    return true;
                }
                if (records == 0) {
                    openingSerial = serial;
                } else {
                    differences |= incremental && records == 1;
                    if (serial == openingSerial) {
                        closingSoas++;
                    }
                }
            } else if (records == 0) {
                return true; // not a transfer: it does not open with the SOA
            }
            records++;
            pos = next;
        }
        return closingSoas >= (differences ? 2 : 1) || incremental && records == 1 && upToDate();
    }

    /** The lone SOA answered is no newer than the client's (RFC 1982 serial arithmetic), or that is unknown. */
    private boolean upToDate() {
        return clientSerial < 0 || (int) (openingSerial - clientSerial) <= 0;
    }

    /** The serial of the SOA that opens the query's authority section (an IXFR's), or -1. */
    private static long authoritySerial(ByteBuf query, QueryView view) {
        int base = view.base();
        int end = base + view.length();
        int pos = view.questionEnd();
        for (int i = query.getUnsignedShort(base + Wire.ANCOUNT_OFFSET); i >= 0; i--) {
            int nameEnd = Names.pass(query, pos, end);
            if (nameEnd == Names.MALFORMED || nameEnd + 10 > end) {
                return -1;
            }
            int rdata = nameEnd + 10;
            int next = rdata + query.getUnsignedShort(nameEnd + 8);
            if (i == 0) { // the first authority record
                boolean soa = query.getUnsignedShort(base + Wire.NSCOUNT_OFFSET) > 0
                        && query.getUnsignedShort(nameEnd) == Wire.TYPE_SOA && next <= end;
                return soa ? soaSerial(query, base, rdata, next) : -1;
            }
            pos = next;
        }
        return -1;
    }

    /** The SERIAL of the SOA whose RDATA spans {@code rdata} to {@code rdataEnd}, or -1. */
    private static long soaSerial(ByteBuf m, int base, int rdata, int rdataEnd) {
        int mname = Names.skip(m, base, rdata, rdataEnd);
        int rname = mname == Names.MALFORMED ? Names.MALFORMED : Names.skip(m, base, mname, rdataEnd);
        if (rname == Names.MALFORMED || rname + 4 > rdataEnd) {
            return -1;
        }
        return m.getUnsignedInt(rname);
    }
}
