package io.sluice.wire;

import io.netty.buffer.ByteBuf;
import java.util.function.LongSupplier;

/**
 * The letters of a question name in a random mix of upper and lower case ("0x20",
 * draft-vixie-dnsext-dns0x20; Unbound's {@code use-caps-for-id}). Resolvers echo the question
 * byte for byte, so a reply has to carry the same mix, which an off-path forger must guess: one
 * more bit per letter on top of the message ID and the source port.
 *
 * <p>The mix is kept as a mask of the bytes flipped, one bit per byte of the name (a question
 * name holds no compression pointer: {@link Names#skip} refuses one in the first name), so that
 * flipping the same bytes again gives the client's case back: in the query before it is sent
 * again, and in an accepted reply's question, which holds the name at the same offsets as the
 * query (a question name is never compressed).
 */
public final class QuestionCase {
    /** Words of a mask: a bit for each of a name's at most 255 bytes. */
    public static final int MASK_WORDS = 4;
    /** The size a scratch array needs: the longest name. */
    public static final int SCRATCH_BYTES = Wire.MAX_NAME_BYTES;

    private QuestionCase() {
    }

    /**
     * Flips the case of a random choice of the letters of the question name of {@code message}
     * (which starts at {@code base}, its name ending just before {@code nameEnd}, well formed) and
     * records them in {@code mask}. The name is read and written back in bulk through
     * {@code scratch} (at least 255 bytes): a ByteBuf's per-byte access checks bounds and
     * reference count each time.
     */
    public static void scramble(ByteBuf message, int base, int nameEnd, long[] mask, byte[] scratch,
                                LongSupplier random) {
        for (int w = 0; w < MASK_WORDS; w++) {
            mask[w] = 0;
        }
        int start = base + Wire.HEADER_BYTES;
        int length = nameEnd - start;
        message.getBytes(start, scratch, 0, length);
        long bits = 0;
        int left = 0;
        for (int pos = 0, len = scratch[0] & 0xFF; len != 0; len = scratch[pos] & 0xFF) {
            for (int i = pos + 1; i <= pos + len; i++) {
                if (left == 0) {
                    bits = random.getAsLong();
                    left = Long.SIZE;
                }
                // Without a branch on the random bit, which the CPU would mispredict for half the
                // letters (QuestionCaseBenchmark.scrambleAndRestore).
                int c = scratch[i];
                int d = (c | 0x20) - 'a';
                int letter = ~(d | (25 - d)) >>> 31; // 1 for a letter, either case, else 0
                int flip = letter & (int) bits;
                scratch[i] = (byte) (c ^ flip << 5);
                mask[i >>> 6] |= (long) flip << i;
                bits >>>= letter; // a bit for each letter only
                left -= letter;
            }
            pos += len + 1;
        }
        message.setBytes(start, scratch, 0, length);
    }

    /**
     * Flips the bytes {@code mask} records in the question name of {@code message} (at
     * {@code base}, ending before {@code nameEnd}), in bulk through {@code scratch}.
     */
    public static void flip(ByteBuf message, int base, int nameEnd, long[] mask, byte[] scratch) {
        int start = base + Wire.HEADER_BYTES;
        int length = nameEnd - start;
        message.getBytes(start, scratch, 0, length);
        flipBytes(scratch, mask);
        message.setBytes(start, scratch, 0, length);
    }

    /** Flips the case bit of the bytes of {@code name} that {@code mask} records. */
    private static void flipBytes(byte[] name, long[] mask) {
        for (int w = 0; w < MASK_WORDS; w++) {
            for (long m = mask[w]; m != 0; m &= m - 1) {
                name[(w << 6) + Long.numberOfTrailingZeros(m)] ^= 0x20;
            }
        }
    }

    /**
     * After {@link #flip} gave an accepted reply's question the client's case back: gives it back
     * to every literal copy of the question name after the question too. A resolver that
     * compresses points its owner names at the question, which the flip fixed, and this costs it
     * one byte's test (the first record's owner is a pointer); one that writes names out in full
     * writes them in the case it was sent, which would otherwise reach the client and the cache.
     * A copy is the name's bytes exactly as sent, from its first length byte to the root.
     *
     * @param base         the reply's first byte
     * @param nameEnd      the end of the reply's question name (client's case, as flip left it)
     * @param questionEnd  the end of the question: where the records start
     * @param sent         scratch for the name as sent, at least {@link #SCRATCH_BYTES}
     */
    public static void flipCopies(ByteBuf reply, int base, int nameEnd, int questionEnd, long[] mask, byte[] sent) {
        if (!Names.spelledOutAt(reply, questionEnd)) {
            return;
        }
        int start = base + Wire.HEADER_BYTES;
        int length = nameEnd - start;
        reply.getBytes(start, sent, 0, length);
        flipBytes(sent, mask);
        Names.replaceCopies(reply, questionEnd, sent, 0, length, reply, start);
    }
}
