package io.sluice.bench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.sluice.wire.QueryView;
import io.sluice.wire.QuestionCase;
import java.security.SecureRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.Type;
import org.xbill.DNS.DClass;

/**
 * What randomize-case adds to a query: scrambling the name of the copy sent upstream and flipping
 * it back in the reply, on a pooled direct buffer as the forwarder's are, with random bits drawn
 * in blocks of 8 KiB from the JDK's Hash_DRBG as {@code forward.QueryIds} draws them; and what
 * those bits cost from each generator the JDK has.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class QuestionCaseBenchmark {
    private ByteBuf message;
    private int nameEnd;
    private final long[] mask = new long[QuestionCase.MASK_WORDS];
    private final byte[] scratch = new byte[QuestionCase.SCRATCH_BYTES];
    private final LongSupplier bits = new Blocks(new SecureRandom());
    private LongSupplier hashDrbg;
    private LongSupplier ctrDrbg;

    /** 64 bits at a time from an 8 KiB block of a SecureRandom. */
    private static final class Blocks implements LongSupplier {
        private final SecureRandom random;
        private final byte[] block = new byte[8192];

        Blocks(SecureRandom random) {
            this.random = random;
        }
        private int next = block.length;

        @Override
        public long getAsLong() {
            if (next == block.length) {
                random.nextBytes(block);
                next = 0;
            }
            long v = 0;
            for (int i = 0; i < 8; i++) {
                v = v << 8 | (block[next++] & 0xFF);
            }
            return v;
        }
    }

    @Setup
    public void setUp() throws Exception {
        hashDrbg = new Blocks(SecureRandom.getInstance("DRBG",
                java.security.DrbgParameters.instantiation(256, java.security.DrbgParameters.Capability.NONE, null)));
        java.security.Security.setProperty("securerandom.drbg.config", "CTR_DRBG,AES-256,use_df");
        ctrDrbg = new Blocks(SecureRandom.getInstance("DRBG",
                java.security.DrbgParameters.instantiation(256, java.security.DrbgParameters.Capability.NONE, null)));
        byte[] wire = Message.newQuery(Record.newRecord(Name.fromString("www.example-domain.com."), Type.A, DClass.IN))
                .toWire();
        message = PooledByteBufAllocator.DEFAULT.directBuffer(512).writeBytes(wire);
        QueryView view = new QueryView();
        view.read(message);
        nameEnd = view.nameEnd();
    }

    @TearDown
    public void tearDown() {
        message.release();
    }

    /**
     * The same work byte by byte through the ByteBuf's accessors, each checking bounds and the
     * reference count: the first version of QuestionCase, kept here to show why it reads in bulk.
     */
    @Benchmark
    public ByteBuf perByteAccessors() {
        java.util.Arrays.fill(mask, 0);
        long b = 0;
        int left = 0;
        int start = 12;
        for (int pos = start, len = message.getUnsignedByte(pos); len != 0; len = message.getUnsignedByte(pos)) {
            for (int i = pos + 1; i <= pos + len; i++) {
                int lower = message.getByte(i) | 0x20;
                if (lower >= 'a' && lower <= 'z') {
                    if (left == 0) {
                        b = bits.getAsLong();
                        left = 64;
                    }
                    if ((b & 1) != 0) {
                        message.setByte(i, message.getByte(i) ^ 0x20);
                        mask[(i - start) >>> 6] |= 1L << (i - start);
                    }
                    b >>>= 1;
                    left--;
                }
            }
            pos += len + 1;
        }
        for (int w = 0; w < mask.length; w++) {
            for (long m = mask[w]; m != 0; m &= m - 1) {
                int i = start + (w << 6) + Long.numberOfTrailingZeros(m);
                message.setByte(i, message.getByte(i) ^ 0x20);
            }
        }
        return message;
    }

    /** {@link #scrambleAndRestore} with bits that cost nothing: what the draws from the SecureRandom cost is the difference. */
    @Benchmark
    public ByteBuf scrambleAndRestoreFreeBits() {
        QuestionCase.scramble(message, 0, nameEnd, mask, scratch, () -> 0x5DEECE66DL);
        QuestionCase.flip(message, 0, nameEnd, mask, scratch);
        return message;
    }

    @Benchmark
    public long bitsNativePrng() {
        return bits.getAsLong();
    }

    @Benchmark
    public long bitsHashDrbg() {
        return hashDrbg.getAsLong();
    }

    @Benchmark
    public long bitsCtrDrbg() {
        return ctrDrbg.getAsLong();
    }

    /** A query's whole extra work: scramble before sending, flip the reply's name back (bits as QueryIds draws them). */
    @Benchmark
    public ByteBuf scrambleAndRestore() {
        QuestionCase.scramble(message, 0, nameEnd, mask, scratch, hashDrbg);
        QuestionCase.flip(message, 0, nameEnd, mask, scratch);
        return message;
    }
}
