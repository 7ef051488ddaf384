package io.sluice.wire;

import io.netty.buffer.ByteBuf;
import java.util.function.LongSupplier;

/**
 * The letters of a question name in a random mix of upper and lower case ("0x20",
 * draft-vixie-dnsext-dns0x20; Unbound's {@code use-caps-for-id}). Resolvers echo the question
 * byte for byte, so a reply has to carry the same mix, which an off-path forger must guess: one
 * more bit per letter on top of the message ID and the source port.
 *
 * <p>The mix is kept as a mask of the bytes flipped, one bit per byte of the name, so that
 * flipping the same bytes again gives the client's case back: in the query before it is sent
 * again, and in an accepted reply's question, which holds the name at the same offsets as the
 * query (a question name is never compressed).
 */
public final class QuestionCase {
    /** Words of a mask: a bit for each of a name's at most 255 bytes. */
    public static final int MASK_WORDS = 4;

    private QuestionCase() {
    }

    /**
     * Flips the case of a random choice of the letters of the question name of {@code message}
     * (which starts at {@code base} and has a well-formed question) and records them in {@code mask}.
     */
    public static void scramble(ByteBuf message, int base, long[] mask, LongSupplier random) {
        for (int w = 0; w < MASK_WORDS; w++) {
            mask[w] = 0;
        }
        int start = base + Wire.HEADER_BYTES;
        long bits = 0;
        int left = 0;
        for (int pos = start, len = message.getUnsignedByte(pos); len != 0; len = message.getUnsignedByte(pos)) {
            for (int i = pos + 1; i <= pos + len; i++) {
                int lower = message.getByte(i) | 0x20;
                if (lower >= 'a' && lower <= 'z') {
                    if (left == 0) {
                        bits = random.getAsLong();
                        left = Long.SIZE;
                    }
                    if ((bits & 1) != 0) {
                        message.setByte(i, message.getByte(i) ^ 0x20);
                        int offset = i - start;
                        mask[offset >>> 6] |= 1L << offset;
                    }
                    bits >>>= 1;
                    left--;
                }
            }
            pos += len + 1;
        }
    }

    /** Flips the bytes {@code mask} records in the question name of {@code message} (at {@code base}). */
    public static void flip(ByteBuf message, int base, long[] mask) {
        int start = base + Wire.HEADER_BYTES;
        for (int w = 0; w < MASK_WORDS; w++) {
            for (long m = mask[w]; m != 0; m &= m - 1) {
                int i = start + (w << 6) + Long.numberOfTrailingZeros(m);
                message.setByte(i, message.getByte(i) ^ 0x20);
            }
        }
    }
}
