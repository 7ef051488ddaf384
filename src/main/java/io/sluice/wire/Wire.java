package io.sluice.wire;

import io.netty.buffer.ByteBuf;

/**
 * DNS message layout (RFC 1035 section 4.1) as named constants: offsets, flag masks, codes.
 */
public final class Wire {
    private Wire() {
    }

    /** The header's RCODE of the message at {@code message}'s reader index (at least a header long). */
    public static int rcode(ByteBuf message) {
        return message.getUnsignedShort(message.readerIndex() + FLAGS_OFFSET) & RCODE_MASK;
    }

    public static final int HEADER_BYTES = 12;
    public static final int ID_OFFSET = 0;
    public static final int FLAGS_OFFSET = 2;
    public static final int QDCOUNT_OFFSET = 4;
    public static final int ANCOUNT_OFFSET = 6;
    public static final int NSCOUNT_OFFSET = 8;
    public static final int ARCOUNT_OFFSET = 10;

    public static final int FLAG_QR = 0x8000;
    public static final int OPCODE_MASK = 0x7800;
    public static final int OPCODE_SHIFT = 11;
    public static final int FLAG_TC = 0x0200;
    public static final int FLAG_RD = 0x0100;
    public static final int FLAG_RA = 0x0080;
    public static final int FLAG_CD = 0x0010;
    public static final int RCODE_MASK = 0x000F;

    public static final int OPCODE_QUERY = 0;

    public static final int RCODE_NOERROR = 0;
    public static final int RCODE_FORMERR = 1;
    public static final int RCODE_SERVFAIL = 2;
    public static final int RCODE_NXDOMAIN = 3;
    public static final int RCODE_NOTIMP = 4;
    public static final int RCODE_REFUSED = 5;
    /** EDNS BADVERS (RFC 6891): 16, its upper bits in the OPT record, the header saying 0. */
    public static final int RCODE_BADVERS = 16;

    public static final int TYPE_OPT = 41;
    public static final int TYPE_SOA = 6;
    public static final int TYPE_CNAME = 5;
    public static final int TYPE_DNAME = 39;
    public static final int TYPE_IXFR = 251;
    public static final int TYPE_AXFR = 252;
    /** EDNS0 option code of a DNS COOKIE (RFC 7873). */
    public static final int EDNS_OPTION_COOKIE = 10;
    /** EDNS0 option code of a TCP keepalive (RFC 7828). */
    public static final int EDNS_OPTION_TCP_KEEPALIVE = 11;
    /** EDNS0 option code of an Extended DNS Error (RFC 8914). */
    public static final int EDNS_OPTION_EDE = 15;
    /** The DO bit in the OPT record's TTL field (RFC 3225). */
    public static final int OPT_TTL_DO = 0x8000;

    /** Longest name on the wire, root label included (RFC 1035 section 2.3.4). */
    public static final int MAX_NAME_BYTES = 255;
    /** Top two bits of a length octet that mark a compression pointer. */
    public static final int POINTER_MASK = 0xC0;
}
