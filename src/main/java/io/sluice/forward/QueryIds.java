package io.sluice.forward;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.security.SecureRandom;
import java.util.function.LongSupplier;

/**
 * Unpredictable 16-bit message IDs and socket choices for one event loop (the spoofing defence of
 * RFC 5452). Drawn from a SecureRandom in blocks, so the per-query cost is an array read and the
 * SecureRandom's lock and syscall are paid once per {@link #BLOCK_IDS} queries.
 */
final class QueryIds implements LongSupplier {
    private static final int BLOCK_IDS = 4096;
    private static final VarHandle BLOCK = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private final SecureRandom random = new SecureRandom();
    private final byte[] block = new byte[BLOCK_IDS * 2];
    private int next = BLOCK_IDS;

    int nextId() {
        if (next == BLOCK_IDS) {
            random.nextBytes(block);
            next = 0;
        }
        int i = next++ * 2;
        return ((block[i] & 0xFF) << 8) | (block[i + 1] & 0xFF);
    }

    /** 64 random bits, from the same block (for {@code wire.QuestionCase}). */
    @Override
    public long getAsLong() {
        if (next > BLOCK_IDS - 4) {
            random.nextBytes(block);
            next = 0;
        }
        int i = next * 2;
        next += 4;
        return (long) BLOCK.get(block, i);
    }

    /** A uniform-enough choice among {@code n} (n is small; the bias is below 1/4096). */
    int nextIndex(int n) {
        return n == 1 ? 0 : nextId() % n;
    }
}
