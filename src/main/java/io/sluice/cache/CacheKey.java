package io.sluice.cache;

import io.netty.buffer.ByteBuf;
import io.sluice.sketch.KeyedHash;
import io.sluice.wire.Names;
import io.sluice.wire.QueryEdns;
import io.sluice.wire.QueryView;
import io.sluice.wire.Wire;
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
 * <p>Each loop fills one key in place for every lookup ({@link #fill}), which allocates nothing;
 * the cache keeps a copy of its bytes in each entry, to tell two keys of one hash apart.
 *
 * <p>A client chooses the bytes, so the hash is keyed per process ({@link KeyedHash}): names made
 * to share a bucket of the {@link AnswerTable} cannot be computed from outside.
 */
final class CacheKey {
    /** After the name: type, class, one octet of flags and two of the UDP size (0 over TCP). */
    private static final int TAIL_BYTES = 7;
    static final int MAX_BYTES = Wire.MAX_NAME_BYTES + TAIL_BYTES;
    private static final int BIT_RD = 1;
    private static final int BIT_CD = 2;
    private static final int BIT_AD = 4;
    private static final int BIT_EDNS = 8;
    private static final int BIT_DO = 16;
    private static final int FLAG_AD = 0x0020;

    private final byte[] bytes = new byte[MAX_BYTES + Long.BYTES]; // whole longs can always be read
    private int length;
    private long hash;

    /**
     * Fills this key from the query {@code view} and {@code edns} have read; the name must be
     * uncompressed, as a question's first name always is.
     *
     * @param udpSize the payload size it was or would be asked upstream with over UDP; 0 over TCP
     */
    void fill(ByteBuf query, QueryView view, QueryEdns edns, int udpSize) {
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
        length = n;
        hash = KeyedHash.of64(bytes, n);
    }

    /**
     * The keys of {@code name} (wire form, lower case, its root label included), of every type or
     * of {@code type} only, and with {@code subtree} those of every name under it too: what an
     * operator's flush removes ({@link AnswerTable#remove}).
     */
    static AnswerTable.KeyFilter names(byte[] name, int type, boolean subtree) {
        return (b, at, length) -> {
            int nameLength = length - TAIL_BYTES;
            if (nameLength < name.length || !subtree && nameLength != name.length
                    || type >= 0 && ((b[at + nameLength] & 0xFF) << 8 | b[at + nameLength + 1] & 0xFF) != type) {
                return false;
            }
            int from = at + nameLength - name.length;
            if (!Arrays.equals(b, from, from + name.length, name, 0, name.length)) {
                return false;
            }
            int i = at; // the tail must start at a label: walk the labels to it
            while (i < from) {
                i += (b[i] & 0xFF) + 1;
            }
            return i == from;
        };
    }

    /** The type of the key {@code b[at, at + length)}. */
    static int type(byte[] b, int at, int length) {
        return (b[at + length - 7] & 0xFF) << 8 | b[at + length - 6] & 0xFF;
    }

    /** The class of the key {@code b[at, at + length)}. */
    static int dclass(byte[] b, int at, int length) {
        return (b[at + length - 5] & 0xFF) << 8 | b[at + length - 4] & 0xFF;
    }

    /** The UDP payload size the answer of the key {@code b[at, at + length)} was asked with; 0 over TCP. */
    static int udpSize(byte[] b, int at, int length) {
        return (b[at + length - 2] & 0xFF) << 8 | b[at + length - 1] & 0xFF;
    }

    /** What of the query the key {@code b[at, at + length)} holds besides the question: rd, cd, ad, edns, do. */
    static List<String> flags(byte[] b, int at, int length) {
        int bits = b[at + length - 3];
        List<String> out = new ArrayList<>();
        String[] names = {"rd", "cd", "ad", "edns", "do"};
        int[] masks = {BIT_RD, BIT_CD, BIT_AD, BIT_EDNS, BIT_DO};
        for (int i = 0; i < names.length; i++) {
            if ((bits & masks[i]) != 0) {
                out.add(names[i]);
            }
        }
        return out;
    }

    /** The keyed 64-bit hash of the bytes. */
    long hash() {
        return hash;
    }

    /** Copies the bytes to {@code to} at {@code at}: their length. */
    int copyTo(byte[] to, int at) {
        System.arraycopy(bytes, 0, to, at, length);
        return length;
    }

    /** Whether {@code length} bytes of {@code b} at {@code at} are this key's. */
    boolean sameAs(byte[] b, int at, int length) {
        return length == this.length && at + length <= b.length && Arrays.equals(bytes, 0, length, b, at, at + length);
    }
}
