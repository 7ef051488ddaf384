package io.sluice.wire;

import io.netty.buffer.ByteBuf;
import io.sluice.sketch.KeyedHash;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What makes two queries get the same answer from an upstream: the name in lower case, type,
 * class, the header bits RD, CD and AD, EDNS present or not with its DO bit, and how it was asked:
 * over TCP, or over UDP for a payload size. An upstream fits a UDP answer to the size (leaving the
 * additional section out, or setting TC) and a TCP answer to nothing, so an answer fetched for
 * one is the answer to that one alone (dnsdist's packet cache keys the transport for the same
 * reason). The size is the one the query was sent upstream with: the client's, at most
 * {@code max-udp-size}, so every client offering that size or more shares one answer. The letter
 * case of the name, the ID and the options that do not change an answer (a COOKIE) are left out.
 *
 * <p>Each loop fills one key in place for every lookup ({@link #of}), which allocates nothing;
 * the cache keeps a copy of its bytes in each entry, to tell two keys of one hash apart, and the
 * forwarder with each query waiting on an upstream, to join identical ones to it.
 *
 * <p>A client chooses the bytes, so the hash is keyed per process ({@link KeyedHash}): names made
 * to share a bucket of a hash table cannot be computed from outside.
 */
public final class AnswerKey {
    /**
     * After the name: type, class, one octet of flags and two of the UDP size (0 over TCP); then
     * the Client Subnet the query is asked with (family, source prefix and address, none without
     * one), and one octet saying how long that is.
     */
    public static final int TAIL_BYTES = 8;
    public static final int MAX_BYTES = Wire.MAX_NAME_BYTES + TAIL_BYTES + 2 + 1 + 16;
    private static final int BIT_SUBNET = 32;
    private static final int BIT_ANY_SUBNET = 64;
    private static final int BIT_RD = 1;
    private static final int BIT_CD = 2;
    private static final int BIT_AD = 4;
    private static final int BIT_EDNS = 8;
    private static final int BIT_DO = 16;
    private static final int FLAG_AD = 0x0020;

    private final byte[] bytes = new byte[MAX_BYTES + Long.BYTES]; // whole longs can always be read
    private int length;
    private long hash;
    /** The hash of the key without its network: {@link #hash} but for a key that names one. */
    private long questionHash;
    private int udpSize;

    /**
     * Fills this key from the query {@code view} has read, when it is one whose answer may be
     * shared: a question, no record but an OPT (a signed query), EDNS version 0 (another gets
     * BADVERS), and not a zone transfer. A query with Client Subnet is keyed on the network it
     * names (family, source prefix, address), so that its answer is shared only with queries asked
     * for the same network (RFC 7871 section 7.3.1, at the source prefix: what a scope shorter than
     * it but not 0 would share more widely is not); an answer for every network has its own key
     * ({@link #anyNetwork}). Over UDP the key holds the payload size the query is asked upstream with (the
     * client's, at most {@code maxUdpSize}: the forwarder's), which is also the most its answer may
     * carry ({@link #udpSize}).
     *
     * @param edns read here, for the caller to look at after
     * @return false, the key left as it was, for a query whose answer is its own
     */
    public boolean of(ByteBuf query, QueryView view, QueryEdns edns, boolean overUdp, int maxUdpSize) {
        if (!view.hasQuestion()) {
            return false;
        }
        if (ZoneTransfer.isTransfer(view.qtype()) || !edns.read(query, view)
                || edns.otherRecords() || edns.version() != 0) {
            return false;
        }
        fill(query, view, edns, overUdp ? Math.min(edns.udpPayload(), maxUdpSize) : 0);
        if (edns.clientSubnet()) {
            int at = ClientSubnet.find(query, view);
            if (at < 0 || !ClientSubnet.wellFormed(query, at)) {
                return false;
            }
            int octets = query.getUnsignedShort(at + 2) - 1; // family (2), source prefix; not the scope
            length--; // the octet of the subnet's length goes after it
            bytes[length - TAIL_BYTES + 5] |= BIT_SUBNET;
            query.getBytes(at + 4, bytes, length, 3);
            query.getBytes(at + 4 + ClientSubnet.FIXED_BYTES, bytes, length + 3, octets - 3);
            length += octets;
            bytes[length++] = (byte) octets;
            hash = KeyedHash.of64(bytes, length);
        }
        return true;
    }

    /**
     * Fills this key from the query {@code view} and {@code edns} have read; the name must be
     * uncompressed, as a question's first name always is.
     *
     * @param udpSize the payload size it was or would be asked upstream with over UDP; 0 over TCP
     */
    void fill(ByteBuf query, QueryView view, QueryEdns edns, int udpSize) {
        this.udpSize = udpSize;
        int name = view.nameEnd() - view.nameStart();
        query.getBytes(view.nameStart(), bytes, 0, name + 4);
        Names.lower(bytes, 0, name); // the name only: type and class octets are numbers, not letters
        int n = name + 4;
        int flags = view.flags();
        int bits = ((flags & Wire.FLAG_RD) != 0 ? BIT_RD : 0) | ((flags & Wire.FLAG_CD) != 0 ? BIT_CD : 0)
                | ((flags & FLAG_AD) != 0 ? BIT_AD : 0) | (edns.present() ? BIT_EDNS : 0)
                | (edns.dnssecOk() ? BIT_DO : 0);
        bytes[n++] = (byte) bits;
        bytes[n++] = (byte) (udpSize >>> 8);
        bytes[n++] = (byte) udpSize;
        bytes[n++] = 0; // no Client Subnet
        length = n;
        hash = KeyedHash.of64(bytes, n);
        questionHash = hash;
    }

    /** Whether this key names a Client Subnet network. */
    public boolean subnet() {
        return bytes[length - 1] != 0;
    }

    /**
     * Makes this key, one that names a network ({@link #subnet}), the key of an answer for every
     * network: one the upstream gave a scope of 0 (RFC 7871 section 7.3.1), kept apart from the
     * answers of any one network and from those to queries without Client Subnet.
     */
    public void anyNetwork() {
        int octets = bytes[length - 1] & 0xFF;
        int flagsAt = length - 1 - octets - 3;
        bytes[flagsAt] = (byte) (bytes[flagsAt] & ~BIT_SUBNET | BIT_ANY_SUBNET);
        length -= octets;
        bytes[length - 1] = 0;
        hash = KeyedHash.of64(bytes, length);
        questionHash = hash;
    }

    /** The UDP payload size in this key: the most its answer may carry over UDP; 0 over TCP. */
    public int udpSize() {
        return udpSize;
    }

    /** The length of the name the key {@code b[at, at + length)} starts with. */
    public static int nameLength(byte[] b, int at, int length) {
        return length - TAIL_BYTES - (b[at + length - 1] & 0xFF);
    }

    /** Where the type of the key {@code b[at, at + length)} is: the tail after its name. */
    private static int tail(byte[] b, int at, int length) {
        return at + nameLength(b, at, length);
    }

    /** The type of the key {@code b[at, at + length)}. */
    public static int type(byte[] b, int at, int length) {
        int t = tail(b, at, length);
        return (b[t] & 0xFF) << 8 | b[t + 1] & 0xFF;
    }

    /** The class of the key {@code b[at, at + length)}. */
    public static int dclass(byte[] b, int at, int length) {
        int t = tail(b, at, length);
        return (b[t + 2] & 0xFF) << 8 | b[t + 3] & 0xFF;
    }

    /** The UDP payload size the answer of the key {@code b[at, at + length)} was asked with; 0 over TCP. */
    public static int udpSize(byte[] b, int at, int length) {
        int t = tail(b, at, length);
        return (b[t + 5] & 0xFF) << 8 | b[t + 6] & 0xFF;
    }

    /**
     * What of the query the key {@code b[at, at + length)} holds besides the question: rd, cd, ad,
     * edns, do, subnet, any-subnet.
     */
    public static List<String> flags(byte[] b, int at, int length) {
        int bits = b[tail(b, at, length) + 4];
        List<String> out = new ArrayList<>();
        String[] names = {"rd", "cd", "ad", "edns", "do", "subnet", "any-subnet"};
        int[] masks = {BIT_RD, BIT_CD, BIT_AD, BIT_EDNS, BIT_DO, BIT_SUBNET, BIT_ANY_SUBNET};
        for (int i = 0; i < names.length; i++) {
            if ((bits & masks[i]) != 0) {
                out.add(names[i]);
            }
        }
        return out;
    }

    /** The keyed 64-bit hash of the bytes. */
    public long hash() {
        return hash;
    }

    /**
     * The keyed hash of the key's question alone: of the bytes without the network, for a key
     * that names one ({@link #subnet}); {@link #hash} for another. What the cache keeps every
     * network's answer to one question near, to bound them.
     */
    public long questionHash() {
        return questionHash;
    }

    /** Copies the bytes to {@code to} at {@code at}: their length. */
    public int copyTo(byte[] to, int at) {
        System.arraycopy(bytes, 0, to, at, length);
        return length;
    }

    /** Whether {@code length} bytes of {@code b} at {@code at} are this key's. */
    public boolean sameAs(byte[] b, int at, int length) {
        return length == this.length && at + length <= b.length && Arrays.equals(bytes, 0, length, b, at, at + length);
    }
}
