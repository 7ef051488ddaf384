package io.sluice.sketch;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An approximate set of the hashes added lately: two Bloom filters of the same size, three bits
 * per hash, all three in one 64-bit word (one cache line read per question). A hash is
 * {@link #mightContain contained} when its bits are set in either filter; {@link #add} sets them in
 * the current one; after {@code period} additions the current becomes the previous, and the older
 * one, cleared, the current. So a hash added within about a generation is always found, one
 * added longer ago is forgotten, and one never added is found only by a false positive (0.95%
 * with 16 bits per hash: docs/benchmarks.md, "Doorkeeper").
 *
 * <p>For the limiter it is TinyLFU's doorkeeper (Einziger and Friedman): a domain asked again
 * earns a counter over a flood of domains asked once. Caffeine's own sketch is not public API.
 *
 * <p>Written by every loop with plain reads and writes, on purpose: a bit lost to a concurrent
 * write, or to the rotation clearing an array another loop is setting, only costs one more miss
 * (a query asked again). Only the addition that ends a generation rotates.
 */
public final class RecentHashes {
    private static final int MAX_WORDS = 1 << 21; // 16 MiB per generation, whatever the bound
    private final int words;
    private final long period;
    private final AtomicLong additions = new AtomicLong();
    private volatile long[] current;
    private volatile long[] previous;

    /**
     * @param hashes     how many hashes a generation holds: its length in additions
     * @param bitsPerHash bits of each filter per hash of a generation (16 gives 0.95% false positives)
     */
    public RecentHashes(long hashes, int bitsPerHash) {
        // As many words as the bits asked for, not a power of two: a word is found by multiplying.
        this.words = (int) Math.min(MAX_WORDS, Math.max(16, hashes * bitsPerHash / 64));
        this.period = Math.max(1, hashes);
        this.current = new long[words];
        this.previous = new long[words];
    }

    /** Whether {@code hash} was added within the current or the previous generation (or collides). */
    public boolean mightContain(int hash) {
        long h = hash * 0x9E3779B97F4A7C15L;
        int word = wordOf(h);
        long mask = mask(h);
        return (current[word] & mask) == mask || (previous[word] & mask) == mask;
    }

    /** Adds {@code hash} to the current generation. */
    public void add(int hash) {
        long h = hash * 0x9E3779B97F4A7C15L;
        long[] cur = current;
        cur[wordOf(h)] |= mask(h);
        if (additions.incrementAndGet() % period == 0) {
            rotate();
        }
    }

    /**
     * The current generation becomes the previous, the older one, cleared, the current. Locked so
     * that two rotations never interleave (a stalled one would leave both fields on one array);
     * it runs once per generation, so no loop ever waits on it in practice.
     */
    private synchronized void rotate() {
        long[] old = previous;
        Arrays.fill(old, 0);
        previous = current;
        current = old;
    }

    /** Bytes of its two filters. */
    public long bytes() {
        return 2L * words * Long.BYTES;
    }

    /** {@link #mightContain}, then {@link #add}: whether {@code hash} had been added lately. */
    public boolean seenBefore(int hash) {
        boolean seen = mightContain(hash);
        add(hash);
        return seen;
    }

    /** The word of {@code h}, from its high half. */
    private int wordOf(long h) {
        return (int) (((h >>> 32) * words) >>> 32);
    }

    /** Three bits of the word, from the hash's low bits (the word index takes its high ones). */
    private static long mask(long h) {
        return 1L << (h & 63) | 1L << ((h >>> 6) & 63) | 1L << ((h >>> 12) & 63);
    }
}
