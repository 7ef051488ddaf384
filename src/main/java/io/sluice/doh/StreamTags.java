package io.sluice.doh;

import java.util.Arrays;

/**
 * The message IDs under which one HTTP/2 connection's queries are asked ({@link Http2Streams}):
 * each tag held by one query at a time, with what it stands for (its stream and its client's own
 * message ID), until its answer gives it back. A tag is an index into these arrays, which grow
 * with the queries in the path up to {@code max}: a connection with ten queries at once holds ten
 * entries, and taking or giving back a tag allocates nothing. Tags given back are taken again
 * last (first in, first out), the longest after their answer. On the connection's loop only.
 */
final class StreamTags {
    private static final long FREE = -1;
    private final int max;
    /** By tag: what it stands for, or {@link #FREE}. */
    private long[] held = new long[8];
    /** The free tags, a ring in the order given back: {@code count} of them from {@code head}. */
    private int[] free = new int[8];
    private int head;
    private int count;

    /** @param max the most tags held at once, a power of two up to 65,536 (the ID's 16 bits) */
    StreamTags(int max) {
        if (Integer.bitCount(max) != 1 || max > 65_536 || max < held.length) {
            throw new IllegalArgumentException("max must be a power of two from 8 to 65536: " + max);
        }
        this.max = max;
        Arrays.fill(held, FREE);
        for (int t = 0; t < free.length; t++) {
            free[t] = t;
        }
        count = free.length;
    }

    /**
     * Takes a free tag for {@code value} (not negative).
     *
     * @return the tag, or -1 when {@code max} are held
     */
    int take(long value) {
        if (count == 0 && !grow()) {
            return -1;
        }
        int tag = free[head];
        head = (head + 1) & (free.length - 1);
        count--;
        held[tag] = value;
        return tag;
    }

    /**
     * Gives {@code tag} back.
     *
     * @return what it stood for, or -1 when no query held it
     */
    long release(int tag) {
        if (tag < 0 || tag >= held.length || held[tag] == FREE) {
            return FREE;
        }
        long value = held[tag];
        held[tag] = FREE;
        free[(head + count) & (free.length - 1)] = tag;
        count++;
        return value;
    }

    /** Whether no tag is held. */
    boolean isEmpty() {
        return count == held.length;
    }

    private boolean grow() {
        int n = held.length;
        if (n == max) {
            return false;
        }
        held = Arrays.copyOf(held, 2 * n);
        Arrays.fill(held, n, 2 * n, FREE);
        free = new int[2 * n]; // empty: every tag of the old size is held
        for (int t = n; t < 2 * n; t++) {
            free[t - n] = t;
        }
        head = 0;
        count = n;
        return true;
    }
}
