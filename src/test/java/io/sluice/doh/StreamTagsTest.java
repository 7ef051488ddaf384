package io.sluice.doh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class StreamTagsTest {
    @Test
    void eachQueryInThePathHoldsATagOfItsOwnUntilItIsGivenBack() {
        StreamTags tags = new StreamTags(64);
        Set<Integer> held = new HashSet<>();
        for (int i = 0; i < 64; i++) {
            int t = tags.take(1000 + i);
            assertTrue(t >= 0 && t < 64, "tag " + t);
            assertTrue(held.add(t), "tag " + t + " handed out twice");
        }
        assertEquals(-1, tags.take(5), "all 64 held: refused");
        int some = held.iterator().next();
        long value = tags.release(some);
        assertTrue(value >= 1000 && value < 1064);
        assertEquals(-1, tags.release(some), "given back twice: it held nothing the second time");
        assertEquals(some, tags.take(7));
        assertEquals(7, tags.release(some));
        assertFalse(tags.isEmpty());
    }

    @Test
    void aTagGivenBackIsTakenAgainLastAndAForeignIdHoldsNothing() {
        StreamTags tags = new StreamTags(8);
        int first = tags.take(1);
        tags.release(first);
        for (int i = 0; i < 7; i++) {
            assertNotEquals(first, tags.take(2), "the tag given back is taken after every other free one");
        }
        assertEquals(first, tags.take(3));
        assertEquals(-1, tags.release(40_000), "an ID no tag has");
        assertEquals(-1, tags.release(-1));
    }

    @Test
    void itGrowsWithTheQueriesInThePathAndIsEmptyOnceAllAreAnswered() {
        StreamTags tags = new StreamTags(4096);
        int[] t = new int[1000];
        for (int i = 0; i < t.length; i++) {
            t[i] = tags.take((long) i << 16);
        }
        for (int i = 0; i < t.length; i++) {
            assertEquals((long) i << 16, tags.release(t[i]));
        }
        assertTrue(tags.isEmpty());
    }
}
