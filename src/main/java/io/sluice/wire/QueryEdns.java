package io.sluice.wire;

import io.netty.buffer.ByteBuf;

/**
 * What a query's EDNS0 says that changes its answer or how it may be sent (RFC 6891): whether
 * it has an OPT record, its DO bit, the UDP payload size it takes, and options that make the
 * answer the client's own (Client Subnet). Read after {@link QueryView}, from the question's end.
 *
 * <p>One instance per event loop, reused: {@link #read} overwrites every field.
 */
public final class QueryEdns {
    /** EDNS0 option code of Client Subnet (RFC 7871): the answer may depend on the client's address. */
    public static final int OPTION_CLIENT_SUBNET = 8;
    /** What a client without EDNS takes over UDP (RFC 1035 section 4.2.1). */
    public static final int CLASSIC_UDP_PAYLOAD = 512;

    private boolean present;
    private int version;
    private boolean dnssecOk;
    private boolean clientSubnet;
    private boolean otherRecords;
    private int payload;
    private int optAt;

    /**
     * Reads the query that {@code view} has just read.
     *
     * @return false when the query is malformed past its question
     */
    public boolean read(ByteBuf buf, QueryView view) {
        present = false;
        dnssecOk = false;
        clientSubnet = false;
        payload = CLASSIC_UDP_PAYLOAD;
        optAt = -1;
        int base = view.base();
        int end = base + view.length();
        int records = buf.getUnsignedShort(base + Wire.ANCOUNT_OFFSET) + buf.getUnsignedShort(base + Wire.NSCOUNT_OFFSET)
                + buf.getUnsignedShort(base + Wire.ARCOUNT_OFFSET);
        otherRecords = records > 1;
        if (records == 0) {
            return true;
        }
        optAt = Opt.find(buf, base, end, view.questionEnd());
        if (optAt < 0) {
            otherRecords = true;
            return true;
        }
        present = true;
        version = buf.getUnsignedByte(optAt + 6);
        payload = Math.max(CLASSIC_UDP_PAYLOAD, buf.getUnsignedShort(optAt + Opt.PAYLOAD_OFFSET));
        dnssecOk = (buf.getUnsignedInt(optAt + 5) & Wire.OPT_TTL_DO) != 0;
        clientSubnet = Opt.hasOption(buf, optAt, end, OPTION_CLIENT_SUBNET);
        return true;
    }

    public boolean present() {
        return present;
    }

    /** The EDNS version; 0 without an OPT. A server that knows only 0 answers others BADVERS. */
    public int version() {
        return present ? version : 0;
    }

    public boolean dnssecOk() {
        return dnssecOk;
    }

    public boolean clientSubnet() {
        return clientSubnet;
    }

    /** Records other than one OPT: a signed query (TSIG, SIG(0)) or an odd one, never answered from a cache. */
    public boolean otherRecords() {
        return otherRecords;
    }

    /** The most a UDP answer to this query may carry: its OPT's payload size (at least 512), or 512 without one. */
    public int udpPayload() {
        return payload;
    }

    /** Index of the OPT's two-byte payload size in the buffer read, valid when {@link #present}. */
    public int payloadAt() {
        return optAt + Opt.PAYLOAD_OFFSET;
    }
}
