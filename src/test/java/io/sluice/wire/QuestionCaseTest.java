package io.sluice.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.sluice.testing.Dns;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Type;

/** Which bytes of a question name randomize-case flips: letters only, one random bit each, and back. */
class QuestionCaseTest {
    /** Letters of both cases, a digit, a hyphen, an underscore, '`' and '[' (next to the letters in ASCII), a byte past 0x7F. */
    private static final String NAME = "aZ0-_`[.x\\200Yq.";

    @Test
    void everyLetterAndNothingElseFlipsWhenEveryBitIsOne() {
        assertEquals("Az0-_`[.X\\200yQ.", scrambled(() -> -1L));
    }

    @Test
    void nothingFlipsWhenEveryBitIsZero() {
        assertEquals(NAME, scrambled(() -> 0L));
    }

    @Test
    void eachLetterTakesTheNextBitAndOtherBytesTakeNone() {
        // bits 1, 0, 1, 0, 1 from the lowest: the five letters a, Z, x, Y, q take them in order
        assertEquals("AZ0-_`[.X\\200YQ.", scrambled(() -> 0x5555_5555_5555_5555L));
    }

    @Test
    void aNameLongerThanSixtyFourLettersDrawsMoreBitsAndFlipsBack() {
        String label = "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk"; // 63 letters, the longest label
        String name = label + "." + label + ".";
        long[] draws = {0};
        String s = scrambled(name, () -> {
            draws[0]++;
            return -1L;
        });
        assertEquals(name.toUpperCase(), s);
        assertEquals(2, draws[0], "126 letters: two draws of 64 bits");
    }

    private static String scrambled(java.util.function.LongSupplier bits) {
        return scrambled(NAME, bits);
    }

    /** The name after scrambling with {@code bits}, checking that flipping it back gives the original bytes. */
    private static String scrambled(String name, java.util.function.LongSupplier bits) {
        byte[] wire = Dns.query(1, name, Type.A);
        ByteBuf query = Unpooled.copiedBuffer(wire);
        QueryView view = new QueryView();
        view.read(query);
        long[] mask = new long[QuestionCase.MASK_WORDS];
        byte[] scratch = new byte[QuestionCase.SCRATCH_BYTES];
        QuestionCase.scramble(query, view.base(), view.nameEnd(), mask, scratch, bits);
        String out = nameOf(query);
        QuestionCase.flip(query, view.base(), view.nameEnd(), mask, scratch);
        assertArrayEquals(wire, ByteBufUtil.getBytes(query), "flipped back byte for byte");
        return out;
    }

    private static String nameOf(ByteBuf query) {
        try {
            return Dns.parse(ByteBufUtil.getBytes(query)).getQuestion().getName().toString();
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }
}
