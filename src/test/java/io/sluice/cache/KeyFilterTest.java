package io.sluice.cache;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.domain.DomainBytes;
import io.sluice.wire.AnswerKey;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class KeyFilterTest {
    /**
     * Whether a flush of {@code name} ({@link AnswerTable.KeyFilter#names}) takes the key of
     * {@code asked}, type A, written as {@link AnswerKey} writes it (lower case), three octets into an entry.
     */
    private static boolean flushTakes(String name, int type, boolean subtree, String asked) {
        byte[] flushed = DomainBytes.fromText(name);
        byte[] askedName = DomainBytes.fromText(asked.toLowerCase());
        byte[] entry = new byte[3 + askedName.length + 1 + AnswerKey.TAIL_BYTES];
        System.arraycopy(askedName, 0, entry, 3, askedName.length); // then the root label, 0
        int tail = 3 + askedName.length + 1;
        entry[tail + 1] = 1; // type A
        entry[tail + 3] = 1; // class IN
        int length = entry.length - 3;
        return AnswerTable.KeyFilter.names(Arrays.copyOf(flushed, flushed.length + 1), type, subtree)
                .test(entry, 3, length);
    }

    @Test
    void aFlushTakesTheNameAndWithSubtreeWholeLabelsUnderIt() {
        assertTrue(flushTakes("www.example.com", -1, false, "WWW.Example.com"), "any case");
        assertTrue(flushTakes("www.example.com", 1, false, "www.example.com"), "type A");
        assertFalse(flushTakes("www.example.com", 28, false, "www.example.com"), "AAAA only");
        assertFalse(flushTakes("example.com", -1, false, "www.example.com"), "not the names under it");
        assertTrue(flushTakes("example.com", -1, true, "www.example.com"));
        assertTrue(flushTakes("example.com", -1, true, "example.com"), "the subtree's own name");
        assertFalse(flushTakes("example.com", -1, true, "badexample.com"), "a label ends where the name begins");
        assertFalse(flushTakes("example.com", -1, true, "a\\007example.com"),
                "the octets of example.com inside a label, after a 7: not a name under it");
        assertFalse(flushTakes("example.com", -1, true, "com"));
        assertTrue(flushTakes(".", -1, true, "anything.example"), "the root's subtree is everything");
        assertFalse(flushTakes(".", -1, false, "anything.example"));
    }
}
