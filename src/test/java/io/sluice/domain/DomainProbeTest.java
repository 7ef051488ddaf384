package io.sluice.domain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The counter table's key hash, against names a client could choose to collide. */
class DomainProbeTest {

    /**
     * 1,024 registrable domains of eight wire octets ({@code abc.abc} and the like), each one
     * differing from the next in a bit of its second label and the same bit four octets before:
     * a first round that multiplied by the name's length alone hashed them all alike, whatever
     * the keys.
     */
    @Test
    void eightOctetNamesWithPairedFlipsSpreadOverHashes() {
        int[] flips = {8, 9, 10, 11, 12, 16, 17, 18, 19, 20}; // low bits of octets 1 and 2 (letters stay lower case)
        Set<Integer> hashes = new HashSet<>();
        for (int bits = 0; bits < 1 << flips.length; bits++) {
            byte[] name = {3, 'a', 'b', 'c', 3, 'a', 'b', 'c'};
            for (int f = 0; f < flips.length; f++) {
                if ((bits >>> f & 1) != 0) {
                    int octet = flips[f] / 8;
                    name[octet] ^= (byte) (1 << flips[f] % 8);
                    name[octet + 4] ^= (byte) (1 << flips[f] % 8);
                }
            }
            StringBuilder text = new StringBuilder();
            for (int i = 0; i < name.length; i++) {
                if (i == 4) {
                    text.append('.');
                } else if (i != 0) {
                    text.append(String.format("\\%03d", name[i] & 0xFF));
                }
            }
            DomainProbe p = DomainProbe.of(text.toString());
            assertEquals(8, p.length);
            hashes.add(p.hashCode());
        }
        // keyed, 32 bits: two of 1,024 share a hash with a chance of about one in 8,000
        assertTrue(hashes.size() >= 1020, hashes.size() + " hashes for 1,024 names");
    }

    @Test
    void aNameOver255OctetsIsNoName() {
        String label = "a".repeat(63);
        String longest = String.join(".", label, label, label, "a".repeat(61)); // 254 octets and the root's
        assertEquals(254, DomainProbe.of(longest).length);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DomainProbe.of(longest + "a"));
        assertTrue(e.getMessage().contains("255"), e.getMessage());
    }
}
