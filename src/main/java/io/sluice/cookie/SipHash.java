package io.sluice.cookie;

/**
 * SipHash-2-4 (Aumasson and Bernstein) of the two message lengths a server cookie hashes (RFC 9018
 * section 4.4): 20 bytes for a client over IPv4 and 32 over IPv6, given as little-endian words as
 * SipHash reads them. Guava's {@code Hashing.sipHash24} computes the same for any input, through a
 * hasher and a hash code per message, which costs several times as much per query as these two
 * straight-line functions (docs/benchmarks.md, "Cookies"); {@code ServerCookiesTest} checks them
 * against Guava's.
 */
final class SipHash {
    private SipHash() {
    }

    /** The hash of the 16 bytes {@code m0, m1} and then the 4 bytes of {@code tail} (its low half). */
    static long of20(long k0, long k1, long m0, long m1, int tail) {
        return of(k0, k1, m0, m1, (20L << 56) | (tail & 0xFFFFFFFFL));
    }

    /** The hash of the 32 bytes {@code m0} to {@code m3}. */
    static long of32(long k0, long k1, long m0, long m1, long m2, long m3) {
        long[] v = start(k0, k1);
        compress(v, m0);
        compress(v, m1);
        compress(v, m2);
        compress(v, m3);
        compress(v, 32L << 56);
        return finish(v);
    }

    /** Two whole words, then the last block (the length in its top byte). */
    private static long of(long k0, long k1, long m0, long m1, long last) {
        long[] v = start(k0, k1);
        compress(v, m0);
        compress(v, m1);
        compress(v, last);
        return finish(v);
    }

    /**
     * The state, four words: an array that never leaves the hash, which the JIT keeps in registers
     * once these methods are inlined (docs/benchmarks.md, "Cookies").
     */
    private static long[] start(long k0, long k1) {
        return new long[] {k0 ^ 0x736f6d6570736575L, k1 ^ 0x646f72616e646f6dL, k0 ^ 0x6c7967656e657261L,
                k1 ^ 0x7465646279746573L};
    }

    private static void compress(long[] v, long m) {
        v[3] ^= m;
        round(v);
        round(v);
        v[0] ^= m;
    }

    private static long finish(long[] v) {
        v[2] ^= 0xFF;
        round(v);
        round(v);
        round(v);
        round(v);
        return v[0] ^ v[1] ^ v[2] ^ v[3];
    }

    private static void round(long[] v) {
        long v0 = v[0];
        long v1 = v[1];
        long v2 = v[2];
        long v3 = v[3];
        v0 += v1;
        v1 = Long.rotateLeft(v1, 13);
        v1 ^= v0;
        v0 = Long.rotateLeft(v0, 32);
        v2 += v3;
        v3 = Long.rotateLeft(v3, 16);
        v3 ^= v2;
        v0 += v3;
        v3 = Long.rotateLeft(v3, 21);
        v3 ^= v0;
        v2 += v1;
        v1 = Long.rotateLeft(v1, 17);
        v1 ^= v2;
        v2 = Long.rotateLeft(v2, 32);
        v[0] = v0;
        v[1] = v1;
        v[2] = v2;
        v[3] = v3;
    }
}
