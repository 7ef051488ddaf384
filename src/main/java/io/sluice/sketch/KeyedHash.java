package io.sluice.sketch;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.security.SecureRandom;

/**
 * A hash of bytes a client chose, keyed per process, for the tables those bytes key (the counter
 * table, the answer cache): one folded 128-bit multiply per eight bytes, after wyhash. Both
 * factors carry a secret, so how a difference in the input spreads depends on keys no client
 * knows; with a plain multiply, a flip of a long's top bit stays a flip of the top bit, whatever
 * the seed, and the next long can cancel it. Not a cryptographic hash: a table searched with it
 * must still bound its probes.
 */
public final class KeyedHash {
    /** Drawn once from the system's entropy: a generator seeded from the clock might be guessed. */
    private static final SecureRandom KEYS = new SecureRandom();
    private static final long KEY_DATA = KEYS.nextLong();
    private static final long KEY_STATE = KEYS.nextLong();
    /** Mixed into the running hash before each fold, so that no round, the first included, multiplies by a known factor. */
    private static final long KEY_ROUND = KEYS.nextLong();
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private KeyedHash() {
    }

    /**
     * The hash of {@code bytes[0, length)}. The array must be readable a whole long past
     * {@code length} rounded down to eight: the bytes past {@code length} are read and ignored.
     */
    public static int of(byte[] bytes, int length) {
        long h = of64(bytes, length);
        return (int) (h ^ h >>> 32);
    }

    /** {@link #of}'s hash before it is folded to 32 bits: a table's bucket and fingerprint both come from it. */
    public static long of64(byte[] bytes, int length) {
        long h = KEY_STATE ^ length;
        for (int i = 0; i < length; i += Long.BYTES) {
            long w = (long) LONGS.get(bytes, i);
            int valid = length - i;
            if (valid < Long.BYTES) {
                w &= (1L << (valid * 8)) - 1;
            }
            h = fold(w ^ KEY_DATA, h ^ KEY_ROUND);
        }
        return fold(h ^ KEY_ROUND, length ^ KEY_DATA);
    }

    /** A hash of {@code hash} (one of {@link #of64}'s) and one more number, keyed as the rest. */
    public static long with(long hash, long value) {
        return fold(hash ^ KEY_ROUND, value ^ KEY_DATA);
    }

    /** Both halves of the 128-bit product, folded. */
    private static long fold(long a, long b) {
        return Math.multiplyHigh(a, b) ^ a * b;
    }
}
