package io.sluice.sketch;

import sun.misc.Unsafe;

/** Where a primitive array's elements start, relative to a cache line: for tables of one-line buckets. */
public final class CacheLines {
    /** Bytes of a cache line on the machines sluice runs on (x86-64, most of arm64). */
    public static final int BYTES = 64;

    private CacheLines() {
    }

    /**
     * Elements to skip at the start of an array of {@code type} so that the next one begins a
     * cache line. A large array is a humongous object, which G1 places at the start of a region,
     * so the padding holds for the array's life; for a small one it is the best guess.
     */
    public static int padOf(Class<?> type, int elementBytes) {
        try {
            var f = Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            int base = ((Unsafe) f.get(null)).arrayBaseOffset(type);
            return (BYTES - base % BYTES) % BYTES / elementBytes;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return 0; // only a cache line's alignment is lost
        }
    }
}
