package io.sluice.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class AnswerKeyTest {
    private static final int BLOCKS = 10;

    /**
     * 1,024 names that all had one hash under the key's first hash (31 * h + b): each two-octet
     * block is (0x90, 0xC0) or (0x91, 0xA1), which add the same to it. A client may send such
     * names, and each is cached on its own.
     */
    private static List<AnswerKey> collidingUnderPolynomial() {
        List<AnswerKey> keys = new ArrayList<>();
        for (int bits = 0; bits < 1 << BLOCKS; bits++) {
            ByteArrayOutputStream name = new ByteArrayOutputStream();
            name.write(2 * BLOCKS);
            for (int b = 0; b < BLOCKS; b++) {
                boolean second = (bits >>> b & 1) != 0;
                name.write(second ? 0x91 : 0x90);
                name.write(second ? 0xA1 : 0xC0);
            }
            name.writeBytes(new byte[] {3, 'c', 'o', 'm', 0});
            keys.add(key(name.toByteArray()));
        }
        return keys;
    }

    /**
     * 1,024 names that had one hash, whatever its seed, under a multiply per long and a shift: in
     * each pair of longs, the first's top bit flipped with the second's top bit and bit 34 (the
     * multiply moves a top-bit difference to the top bit alone, the shift copies it to bit 34,
     * and the next long cancels both).
     */
    private static List<AnswerKey> collidingUnderMultiplyShift() {
        byte[] base = new byte[3 * 61 + 5]; // three labels of 60 octets, then com.
        for (int label = 0; label < 3; label++) {
            base[61 * label] = 60;
            Arrays.fill(base, 61 * label + 1, 61 * label + 61, (byte) '0');
        }
        System.arraycopy(new byte[] {3, 'c', 'o', 'm', 0}, 0, base, 183, 5);
        List<AnswerKey> keys = new ArrayList<>();
        for (int bits = 0; bits < 1 << BLOCKS; bits++) {
            byte[] name = base.clone();
            for (int pair = 0; pair < BLOCKS; pair++) {
                if ((bits >>> pair & 1) != 0) {
                    name[16 * pair + 7] ^= (byte) 0x80; // the first long's top bit
                    name[16 * pair + 15] ^= (byte) 0x80; // the second's top bit
                    name[16 * pair + 12] ^= 0x04; // and its bit 34
                }
            }
            keys.add(key(name));
        }
        return keys;
    }

    /** The key of an A query for the wire-format {@code name}, RD set. */
    private static AnswerKey key(byte[] name) {
        ByteArrayOutputStream q = new ByteArrayOutputStream();
        q.writeBytes(new byte[] {0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0}); // RD, one question
        q.writeBytes(name);
        q.writeBytes(new byte[] {0, 1, 0, 1}); // A, IN
        return key(Unpooled.wrappedBuffer(q.toByteArray()));
    }

    private static AnswerKey key(ByteBuf query) {
        QueryView view = new QueryView();
        view.read(query);
        QueryEdns edns = new QueryEdns();
        assertTrue(edns.read(query, view));
        AnswerKey k = new AnswerKey();
        k.fill(query, view, edns, 0);
        return k;
    }

    @Test
    void namesAClientMadeToCollideSpreadOverHashes() {
        for (List<AnswerKey> family : List.of(collidingUnderPolynomial(), collidingUnderMultiplyShift())) {
            Set<Long> hashes = new HashSet<>();
            Set<Long> buckets = new HashSet<>();
            for (AnswerKey k : family) {
                hashes.add(k.hash());
                buckets.add(k.hash() >>> 32 >>> 22); // the top 10 bits: the AnswerTable's bucket of 1,024
            }
            assertEquals(1024, hashes.size(), "keyed, 64 bits: no two of 1,024 share a hash");
            // 1,024 names thrown into 1,024 buckets fill about 1 - 1/e of them (647)
            assertTrue(buckets.size() >= 590, buckets.size() + " buckets of 1,024 for 1,024 names");
        }
    }

    @Test
    void aKeyMatchesItsOwnBytesOnly() {
        List<AnswerKey> keys = collidingUnderPolynomial();
        byte[] bytes = new byte[AnswerKey.MAX_BYTES];
        for (int i = 1; i < keys.size(); i++) {
            int n = keys.get(i - 1).copyTo(bytes, 0);
            assertFalse(keys.get(i).sameAs(bytes, 0, n));
            assertTrue(keys.get(i - 1).sameAs(bytes, 0, n));
            assertFalse(keys.get(i - 1).sameAs(bytes, 0, n - 1));
        }
        AnswerKey again = collidingUnderPolynomial().get(7);
        assertEquals(keys.get(7).hash(), again.hash());
        int n = keys.get(7).copyTo(bytes, 0);
        assertTrue(again.sameAs(bytes, 0, n));
    }
}
