package io.sluice.limit;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Whether a domain was asked for before, for admission to a nearly full counter table: TinyLFU's
 * doorkeeper (Einziger and Friedman), so that a domain asked again earns a counter over a flood
 * of domains asked once. Two Bloom filters of the same size, three bits per domain: a domain is
 * "seen" when its bits are set in either; each sighting sets them in the current one; after a
 * tenth of its bits' worth of sightings the current becomes the previous, and the older one,
 * cleared, the current. So a domain asked twice within about a generation passes, and a domain
 * asked once passes only by a false positive: about 1.7% with three bits per generation at a
 * tenth full. Caffeine's own sketch is not public API, hence this one.
 *
 * <p>Written by every loop with plain reads and writes, on purpose: a bit lost to a concurrent
 * write, or to the rotation clearing an array another loop is setting, only makes a domain wait
 * for one more query. Only the sighting that ends a generation rotates, so one thread does.
 */
final class Doorkeeper {
    private static final int MAX_BITS_LOG2 = 27; // 16 MiB per generation, whatever max-domains is
    private final int shift;
    private final long period;
    private final AtomicLong sightings = new AtomicLong();
    private volatile long[] current;
    private volatile long[] previous;

    /** @param domains how many domains it should tell apart in a generation: the table's bound */
    Doorkeeper(int domains) {
        int log2 = Math.max(10, Math.min(MAX_BITS_LOG2, 64 - Long.numberOfLeadingZeros(8L * domains - 1)));
        this.shift = 64 - log2;
        this.period = (1L << log2) / 10;
        this.current = new long[1 << (log2 - 6)];
        this.previous = new long[1 << (log2 - 6)];
    }

    /** Records a sighting of the domain of {@code hash}; true when it had been seen before. */
    boolean seenBefore(int hash) {
        long h = hash * 0x9E3779B97F4A7C15L;
        long[] cur = current;
        long[] prev = previous;
        boolean inCurrent = true;
        boolean inPrevious = true;
        for (int i = 0; i < 3; i++) {
            int bit = (int) (h >>> shift);
            long mask = 1L << bit;
            int word = bit >>> 6;
            inCurrent &= (cur[word] & mask) != 0;
            inPrevious &= (prev[word] & mask) != 0;
            cur[word] |= mask;
            h = Long.rotateLeft(h, 21) * 0xC2B2AE3D27D4EB4FL;
        }
        if (sightings.incrementAndGet() % period == 0) {
            Arrays.fill(prev, 0);
            previous = cur;
            current = prev;
        }
        return inCurrent || inPrevious;
    }
}
