package io.sluice.forward;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.DrbgParameters;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.function.LongSupplier;

/**
 * Unpredictable 16-bit message IDs, socket choices and letter-case bits for one event loop (the
 * spoofing defences of RFC 5452 and 0x20). Drawn in blocks from the JDK's Hash_DRBG (SHA-256,
 * NIST SP 800-90A, seeded by the system's entropy source), so the per-query cost is an array read
 * and the generator's lock is paid once per block. The default SecureRandom (NativePRNG) costs
 * several times as much per byte (JMH {@code QuestionCaseBenchmark.bits*}), and a query draws
 * about ten bytes: its ID, its socket and its name's letters.
 */
final class QueryIds implements LongSupplier {
    private static final int BLOCK_IDS = 4096;
    private static final VarHandle BLOCK = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private final SecureRandom random = drbg();
    private final byte[] block = new byte[BLOCK_IDS * 2];
    private int next;

    /** Draws the first block here, off the loop: a new generator seeds itself then. */
    QueryIds() {
        random.nextBytes(block);
    }

    private static SecureRandom drbg() {
        try {
            return SecureRandom.getInstance("DRBG", DrbgParameters.instantiation(256, DrbgParameters.Capability.NONE,
                    "sluice query ids".getBytes(StandardCharsets.US_ASCII)));
        } catch (NoSuchAlgorithmException e) {
            return new SecureRandom(); // a JDK without DRBG: slower, as unpredictable
        }
    }

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
