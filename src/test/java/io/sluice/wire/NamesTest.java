package io.sluice.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Names read in place, and what a message built to make reading them costly gets. */
class NamesTest {
    /** A message whose names are all pointers: a header, then the root at 12, then pointers each to the one before. */
    private static ByteBuf pointerChain(int pointers) {
        ByteBuf m = Unpooled.buffer();
        m.writeZero(Wire.HEADER_BYTES);
        m.writeByte(0); // the root, at 12
        for (int i = 0; i < pointers; i++) {
            int target = i == 0 ? Wire.HEADER_BYTES : Wire.HEADER_BYTES + 1 + 2 * (i - 1);
            m.writeShort(0xC000 | target);
        }
        return m;
    }

    @Test
    void lowerCasingEightBytesAtATimeMatchesOneByOne() {
        Random random = new Random(7);
        for (int round = 0; round < 20_000; round++) {
            byte[] b = new byte[1 + random.nextInt(40)];
            for (int i = 0; i < b.length; i++) { // every byte value, bunched around the letters' edges
                b[i] = (byte) (random.nextBoolean() ? random.nextInt(256) : 0x3F + random.nextInt(0x22) | random.nextInt(2) << 7);
            }
            int from = random.nextInt(b.length);
            int to = from + random.nextInt(b.length - from + 1);
            byte[] expected = b.clone();
            for (int i = from; i < to; i++) {
                expected[i] = Names.lower(expected[i]);
            }
            Names.lower(b, from, to);
            assertArrayEquals(expected, b);
        }
    }

    @Test
    void aNameFollowsAtMostMaxHopsPointers() {
        ByteBuf m = pointerChain(Names.MAX_HOPS + 1);
        int last = Wire.HEADER_BYTES + 1 + 2 * (Names.MAX_HOPS - 1); // the name of MAX_HOPS hops
        assertEquals(last + 2, Names.skip(m, 0, last, m.writerIndex()));
        assertEquals(Names.MALFORMED, Names.skip(m, 0, last + 2, m.writerIndex()), "one hop more");
        assertEquals(last + 4, Names.pass(m, last + 2, m.writerIndex()), "passed in place, it ends at its pointer");
    }

    @Test
    void passingOverANameReadsOnlyItsOwnOctets() {
        ByteBuf m = Unpooled.wrappedBuffer(new byte[] {3, 'w', 'w', 'w', (byte) 0xC0, 0x3F, 9});
        assertEquals(6, Names.pass(m, 0, m.writerIndex()), "a pointer forwards or anywhere is not followed");
        assertEquals(Names.MALFORMED, Names.pass(m, 0, 5), "the pointer runs past the end");
        assertEquals(Names.MALFORMED, Names.pass(Unpooled.wrappedBuffer(new byte[] {0x41, 0}), 0, 2), "reserved type");
        ByteBuf tooLong = Unpooled.buffer();
        for (int i = 0; i < 64; i++) {
            tooLong.writeBytes(new byte[] {3, 'a', 'b', 'c'});
        }
        tooLong.writeByte(0);
        assertEquals(Names.MALFORMED, Names.pass(tooLong, 0, tooLong.writerIndex()), "257 octets in place");
    }

    /**
     * A query built to make every record's name a walk of a long chain: the first answer's data
     * holds 8,000 pointers, each to the one before, and 4,000 answers are named by a pointer to
     * the last. Its OPT is found by passing over the names, and the records' names, followed, are
     * malformed (more hops than a name may take).
     */
    @Test
    void aQueryOfNamesAtTheEndOfAPointerChainIsReadInOnePass() {
        int chain = 8000;
        int records = 4000;
        ByteBuf q = Unpooled.buffer();
        q.writeShort(0x1234).writeShort(0x0100).writeShort(1).writeShort(records).writeShort(0).writeShort(1);
        q.writeBytes(new byte[] {7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1});
        q.writeByte(0).writeShort(16).writeShort(1).writeInt(0).writeShort(2 * chain); // root TXT IN, its data:
        int data = q.writerIndex();
        for (int i = 0; i < chain; i++) {
            q.writeShort(0xC000 | (i == 0 ? Wire.HEADER_BYTES : data + 2 * (i - 1)));
        }
        int named = q.writerIndex();
        for (int i = 1; i < records; i++) {
            q.writeShort(0xC000 | (data + 2 * (chain - 1))).writeShort(1).writeShort(1).writeInt(0).writeShort(0);
        }
        q.writeByte(0).writeShort(Wire.TYPE_OPT).writeShort(1232).writeInt(0).writeShort(0);
        assertTrue(q.writerIndex() <= 65_535, "fits a TCP frame");

        QueryView view = new QueryView();
        assertEquals(QueryView.Check.QUERY, view.read(q));
        QueryEdns edns = new QueryEdns();
        assertTrue(edns.read(q, view));
        assertTrue(edns.present());
        assertEquals(1232, edns.udpPayload());
        assertEquals(Names.MALFORMED, Names.skip(q, 0, named, q.writerIndex()));
    }
}
