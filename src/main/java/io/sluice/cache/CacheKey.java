package io.sluice.cache;

import io.netty.buffer.ByteBuf;
import io.sluice.sketch.KeyedHash;
import io.sluice.wire.Names;
import io.sluice.wire.QueryEdns;
import io.sluice.wire.QueryView;
import io.sluice.wire.Wire;
import java.util.Arrays;

/**
 * What makes two queries get the same answer from an upstream: the name in lower case, type,
 * class, the header bits RD, CD and AD, and EDNS present or not with its DO bit. The letter case
 * of the name, the ID and the options that do not change an answer (a COOKIE, a payload size)
 * are left out.
 *
 * <p>Each loop fills one key in place for every lookup ({@link #fill}), which allocates nothing;
 * the cache keeps {@link #copy copies}. A filled key and a copy are equal when their bytes are.
 *
 * <p>A client chooses the bytes, so the hash is keyed per process ({@link KeyedHash}), and keys
 * are ordered as well, so that the cache's map searches a bin of equal hashes as a tree: a bin of
 * names made to collide would otherwise cost every lookup in it a walk of them all, on the loop.
 */
final class CacheKey implements Comparable<CacheKey> {
    /** Name, type and class, and one octet of flags. */
    private static final int MAX_BYTES = Wire.MAX_NAME_BYTES + 5;
    private static final int BIT_RD = 1;
    private static final int BIT_CD = 2;
    private static final int BIT_AD = 4;
    private static final int BIT_EDNS = 8;
    private static final int BIT_DO = 16;
    private static final int FLAG_AD = 0x0020;

    private final byte[] bytes;
    private int length;
    private int hash;

    /** A key to fill. */
    CacheKey() {
        this.bytes = new byte[MAX_BYTES + Long.BYTES]; // whole longs can always be read
    }

    private CacheKey(byte[] bytes, int hash) {
        this.bytes = bytes;
        this.length = bytes.length;
        this.hash = hash;
    }

    /**
     * Fills this key from the query {@code view} and {@code edns} have read; the name must be
     * uncompressed, as a question's first name always is.
     */
    void fill(ByteBuf query, QueryView view, QueryEdns edns) {
        int n = 0;
        for (int i = view.nameStart(); i < view.nameEnd() + 4; i++) {
            byte b = query.getByte(i);
            if (i < view.nameEnd()) {
                b = Names.lower(b); // the name only: type and class octets are numbers, not letters
            }
            bytes[n++] = b;
        }
        int flags = view.flags();
        int bits = ((flags & Wire.FLAG_RD) != 0 ? BIT_RD : 0) | ((flags & Wire.FLAG_CD) != 0 ? BIT_CD : 0)
                | ((flags & FLAG_AD) != 0 ? BIT_AD : 0) | (edns.present() ? BIT_EDNS : 0)
                | (edns.dnssecOk() ? BIT_DO : 0);
        bytes[n++] = (byte) bits;
        length = n;
        hash = KeyedHash.of(bytes, n);
    }

    /** Bytes of the question's name on the wire. */
    int nameBytes() {
        return length - 5;
    }

    /** A copy to keep in the cache. */
    CacheKey copy() {
        return new CacheKey(Arrays.copyOf(bytes, length), hash);
    }

    /** Bytes the key takes on the heap, roughly: for the cache's weigher. */
    int heapBytes() {
        return 48 + length;
    }

    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CacheKey k && k.hash == hash && Arrays.equals(bytes, 0, length, k.bytes, 0, k.length);
    }

    /** By bytes: zero exactly when {@link #equals}. */
    @Override
    public int compareTo(CacheKey o) {
        return Arrays.compareUnsigned(bytes, 0, length, o.bytes, 0, o.length);
    }
}
