package io.sluice.limit;

import io.sluice.sketch.CacheLines;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongUnaryOperator;

/**
 * The limiter's counters without an object per domain: one {@code long[]} of slots, each a key
 * (the domain's keyed 61-bit fingerprint and three flags) and the algorithm's 64-bit word, eight
 * slots (two cache lines) to a bucket. A domain is claimed in its first bucket while that has more
 * than {@link #ROOMY} empty slots, else in the emptier of its two, and looked up in the first, then
 * the second: a decision reads one bucket (two for a domain in its second bucket, and for one not yet
 * tracked) and moves the word by compare-and-set: no lock, no allocation, nothing for the
 * collector to trace or copy. The table holds its bound at two thirds full, 16 bytes a slot and 24
 * a domain of the bound; turning to the emptier bucket once the first is nearly full is what
 * allows that load, where four-slot buckets filled first while they have room turn claims away
 * already at half full (docs/benchmarks.md, "Heap per tracked domain").
 *
 * <p>The name is not kept: what shows a domain (the refusal log, the busiest domains, flood lines)
 * copies it from the query. Two names share a fingerprint with a chance of about 2^-42 per
 * lookup: they would share a counter.
 *
 * <p>A slot goes through three states, and the concurrency invariant is that each change is one
 * compare-and-set or is made on a slot no loop can match:
 * <ol>
 *   <li>empty: key 0, word 0. A loop claims it by setting the key from 0 (the word is already a
 *       fresh one), always the first empty slot of the bucket chosen as above, and looks again: of
 *       two loops that claimed the domain at once (in two slots of its buckets, one perhaps just
 *       emptied), the slot first in the buckets' order is kept and the other retired.</li>
 *   <li>live: the key, and a word no algorithm makes {@link #DEAD}.</li>
 *   <li>retired: the janitor swapped the word of an idle domain for {@link #DEAD}. Lookups pass
 *       over it, so the domain's next query claims a fresh slot, and a loop that held the slot
 *       sees {@code DEAD} and looks again: no count lands on a retired slot. A grace later
 *       ({@link Janitor#GRACE}), long after any loop let go of it, the janitor marks the key
 *       {@link #EMPTYING} (which nothing matches), zeroes the word, then the key.</li>
 * </ol>
 * A loop holds a slot for one decision; the grace between retiring and emptying covers it. A loop
 * stalled for the whole grace inside one decision could write into a slot another domain took
 * over (count its query there, or set its word); nothing else can. The grace is short, not a
 * janitor interval, because a retired slot takes room: a pass may retire most of the table (a
 * flood of domains asked once), and new domains need that room back soon after.
 */
public final class CounterTable {
    /** No slot: not tracked, or no room. */
    static final int NONE = -1;
    /** The word of a retired slot. No algorithm stores it in a live one ({@link Algorithm#isWord}). */
    public static final long DEAD = Long.MIN_VALUE;
    /** Key flag: the domain has an override; its budget is looked up by fingerprint. */
    static final long OVERRIDDEN = 1;
    /** Key flag: the domain is in a random-subdomain flood ({@code flood.Floods}): its budget is the cut. */
    static final long FLOODED = 2;
    /** Key flag: the janitor is emptying the slot; no lookup matches it. */
    static final long EMPTYING = 4;
    private static final long FLAGS = 7;
    static final int BUCKET_SLOTS = 8;
    /**
     * Empty slots past which a domain's first bucket takes it whatever its second holds. Two: while
     * a table fills to its bound, few domains go to their second bucket and almost no claim finds no
     * room (docs/benchmarks.md, "Heap per tracked domain"); always taking the emptier would put more
     * domains in their second bucket, each of their decisions then reading two buckets
     * (docs/benchmarks.md, "Decision (JMH)").
     */
    private static final int ROOMY = 2;
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    /**
     * Longs before the first slot, so that a bucket is two whole cache lines: a table this large is
     * a humongous object, which G1 places at the start of a region.
     */
    private static final int PAD = CacheLines.padOf(long[].class, Long.BYTES);

    private final long[] slots;
    private final int buckets;
    /** Slots of buckets, then the one slot outside them that {@link #extraSlot} names. */
    private final int slotCount;
    /** Retired slots seen by a pass, to be emptied a grace later: the janitor's only. */
    private final long[] retiredSeen;
    private final AtomicInteger live = new AtomicInteger();

    /**
     * A table for at most {@code maxDomains} live domains, half as many slots again: room for a
     * domain in one of its buckets, and for the slots retired within a grace.
     */
    CounterTable(int maxDomains) {
        long wanted = (3L * maxDomains / 2 + BUCKET_SLOTS - 1) / BUCKET_SLOTS;
        this.buckets = (int) Math.max(2, Math.min(1 << 26, wanted));
        this.slotCount = buckets * BUCKET_SLOTS;
        this.slots = new long[PAD + 2 * (slotCount + 1)];
        this.retiredSeen = new long[(slotCount + 63) / 64];
    }

    /** The fingerprint of a name whose keyed 64-bit hash is {@code hash}: never 0, flags clear. */
    public static long fingerprint(long hash) {
        long fp = hash & ~FLAGS;
        return fp == 0 ? FLAGS + 1 : fp;
    }

    /** Slots in buckets: where {@link #forEachSlot} walks. */
    public int capacity() {
        return slotCount;
    }

    /** A slot outside every bucket, never matched nor retired: the overflow counter's. */
    int extraSlot() {
        return slotCount;
    }

    public long key(int slot) {
        return (long) LONGS.getVolatile(slots, PAD + 2 * slot);
    }

    public long word(int slot) {
        return (long) LONGS.getVolatile(slots, PAD + 2 * slot + 1);
    }

    public boolean compareAndSetWord(int slot, long expected, long next) {
        return LONGS.compareAndSet(slots, PAD + 2 * slot + 1, expected, next);
    }

    boolean compareAndSetKey(int slot, long expected, long next) {
        return LONGS.compareAndSet(slots, PAD + 2 * slot, expected, next);
    }

    /** Sets the key of {@link #extraSlot}, which is never claimed. */
    void setExtraKey(long key) {
        LONGS.setVolatile(slots, PAD + 2 * slotCount, key);
    }

    public static long fingerprintOf(long key) {
        return key & ~FLAGS;
    }

    /** Whether {@code slot} is live for {@code fp}: its key and a word not {@link #DEAD}. */
    public boolean holds(int slot, long fp) {
        long k = key(slot);
        long offDead = word(slot) ^ DEAD; // 0 exactly when the word is DEAD
        long dead = ((offDead | -offDead) >>> 63) ^ 1; // then 1, else 0: x | -x is negative for any other x
        // One test, not three. The loops meet an emptying or retired slot only once the janitor
        // has retired one, and C2 compiles a test never seen to fail as a trap: that first
        // retirement made every compiled method that inlines this one (the limiter's, the
        // forwarder's reply path) fall back and be compiled again, at once (docs/benchmarks.md,
        // "p99 at 20k qps").
        return (((k & ~FLAGS) ^ fp) | (k & EMPTYING) | dead) == 0;
    }

    /** {@code slot}'s word while it holds {@code fp}; 0 (a domain never seen) once it is retired. */
    public long wordOf(int slot, long fp) {
        long w = word(slot);
        return w == DEAD || !holds(slot, fp) ? 0 : w;
    }

    /** Whether {@code slot} no longer holds {@code fp}'s domain: its word is gone for good. */
    public boolean retired(int slot, long fp) {
        return !holds(slot, fp);
    }

    /** Sets {@code slot}'s word from {@code expected} to {@code next}: false when it held another, or no longer holds {@code fp}. */
    public boolean compareAndSetWord(int slot, long fp, long expected, long next) {
        return expected != DEAD && next != DEAD && holds(slot, fp) && compareAndSetWord(slot, expected, next);
    }

    /**
     * Sets {@code slot}'s word to {@code next} of the word it holds, unless it no longer holds
     * {@code fp} (a retired slot stays {@link #DEAD}). {@code next} may run more than once.
     */
    public void replace(int slot, long fp, LongUnaryOperator next) {
        while (true) {
            long s = word(slot);
            long n;
            if (s == DEAD || !holds(slot, fp) || (n = next.applyAsLong(s)) == DEAD || compareAndSetWord(slot, s, n)) {
                return;
            }
        }
    }

    /** The live slot of the domain with {@code hash}, or {@link #NONE}. */
    int find(long hash) {
        long fp = fingerprint(hash);
        int b1 = firstBucket(hash);
        int s = findIn(b1, fp);
        return s != NONE ? s : findIn(secondBucket(hash, b1), fp);
    }

    /** The bucket of the hash's low half: any number of buckets, by multiplying rather than masking. */
    private int firstBucket(long hash) {
        return (int) (((hash & 0xFFFF_FFFFL) * buckets) >>> 32);
    }

    private int secondBucket(long hash, int first) {
        int b = (int) (((hash >>> 32) * buckets) >>> 32);
        return b != first ? b : (first + 1) % buckets;
    }

    private int findIn(int bucket, long fp) {
        int first = bucket * BUCKET_SLOTS;
        for (int s = first; s < first + BUCKET_SLOTS; s++) {
            if (holds(s, fp)) {
                return s;
            }
        }
        return NONE;
    }

    /** Empty slots of {@code bucket}. */
    private int emptyIn(int bucket) {
        int n = 0;
        int first = bucket * BUCKET_SLOTS;
        for (int s = first; s < first + BUCKET_SLOTS; s++) {
            n += key(s) == 0 ? 1 : 0;
        }
        return n;
    }

    private int firstEmpty(int bucket) {
        int first = bucket * BUCKET_SLOTS;
        for (int s = first; s < first + BUCKET_SLOTS; s++) {
            if (key(s) == 0) {
                return s;
            }
        }
        return NONE;
    }

    /**
     * The live slot of the domain with {@code hash}, claimed with {@code flags} if it has none;
     * {@link #NONE} when both its buckets are full.
     */
    int claim(long hash, long flags) {
        long fp = fingerprint(hash);
        int b1 = firstBucket(hash);
        int b2 = secondBucket(hash, b1);
        while (true) {
            int s = findIn(b1, fp);
            if (s == NONE) {
                s = findIn(b2, fp);
            }
            if (s != NONE) {
                return s;
            }
            int e1 = emptyIn(b1);
            boolean first = e1 > ROOMY || emptyIn(b2) <= e1;
            int e = firstEmpty(first ? b1 : b2);
            if (e == NONE) { // the chosen bucket filled since it was counted
                e = firstEmpty(first ? b2 : b1);
            }
            if (e == NONE) {
                return NONE;
            }
            if (compareAndSetKey(e, 0, fp | flags)) {
                live.incrementAndGet();
                if (keepOne(fp, b1, b2, e)) {
                    return e;
                }
            }
        }
    }

    /**
     * After claiming {@code mine} for {@code fp}: any other live slot of {@code fp}, in the
     * buckets' order, is another loop's claim of the same domain (in a slot the janitor had just
     * emptied). The first in that order is kept and the others retired, so that one slot counts
     * the domain from now on; a query a loop counted on a retired one meanwhile is a count apart.
     *
     * @return whether {@code mine} is the one kept
     */
    private boolean keepOne(long fp, int b1, int b2, int mine) {
        int kept = NONE;
        for (int i = 0; i < 2 * BUCKET_SLOTS; i++) {
            int s = (i < BUCKET_SLOTS ? b1 : b2) * BUCKET_SLOTS + i % BUCKET_SLOTS;
            if (holds(s, fp)) {
                if (kept == NONE) {
                    kept = s;
                } else {
                    retire(s, fp);
                }
            }
        }
        if (kept == mine) {
            return true;
        }
        retire(mine, fp);
        return false;
    }

    /** Swaps the word of {@code slot}, whatever it is, for {@link #DEAD}, while it holds {@code fp}. */
    private void retire(int slot, long fp) {
        long w;
        while (holds(slot, fp) && (w = word(slot)) != DEAD) {
            if (compareAndSetWord(slot, w, DEAD)) {
                live.decrementAndGet();
                return;
            }
        }
    }

    /** Live slots now: each claim adds one, and whoever swaps a live word for {@link #DEAD} takes it off. */
    int live() {
        return live.get();
    }

    /**
     * The janitor's pass, off the loops: asks {@code idle} of each live slot, retires those it says
     * may go and tells {@code retired}; notes them, and the slots loops retired since the last pass,
     * for {@link #emptyRetired}.
     *
     * @return the slots retired
     */
    int retireIdle(SlotPredicate idle, SlotVisitor retired) {
        int count = 0;
        for (int s = 0; s < slotCount; s++) {
            long k = key(s);
            if (k == 0) {
                continue;
            }
            long w = word(s);
            long bit = 1L << (s & 63);
            if (w == DEAD) {
                retiredSeen[s >>> 6] |= bit; // retired by a loop's claim
            } else if ((k & EMPTYING) == 0 && idle.test(s, k, w) && compareAndSetWord(s, w, DEAD)) {
                live.decrementAndGet();
                retiredSeen[s >>> 6] |= bit;
                retired.visit(s, k);
                count++;
            }
        }
        return count;
    }

    /**
     * Empties the slots {@link #retireIdle} noted, telling {@code emptied} with the key each had
     * before a loop can claim it: the janitor's, a grace after that pass ({@link Janitor}).
     */
    void emptyRetired(SlotVisitor emptied) {
        for (int i = 0; i < retiredSeen.length; i++) {
            long bits = retiredSeen[i];
            while (bits != 0) {
                int s = i << 6 | Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
                emptied.visit(s, key(s));
                empty(s);
            }
            retiredSeen[i] = 0;
        }
    }

    /** Empties a slot retired a grace ago, which no loop holds; the janitor's only. */
    private void empty(int slot) {
        long k;
        do {
            k = key(slot);
        } while (!compareAndSetKey(slot, k, k | EMPTYING)); // a loop may be setting a flag
        LONGS.setVolatile(slots, PAD + 2 * slot + 1, 0L);
        LONGS.setVolatile(slots, PAD + 2 * slot, 0L);
    }

    /** Calls {@code each} with every live slot and its key, off the loops. */
    void forEachLive(SlotVisitor each) {
        for (int s = 0; s < slotCount; s++) {
            long k = key(s);
            if (k != 0 && (k & EMPTYING) == 0 && word(s) != DEAD) {
                each.visit(s, k);
            }
        }
    }

    /** Sets or clears {@code flag} in the key of {@code slot} if it still holds {@code fp}: false when it does not. */
    boolean flag(int slot, long fp, long flag, boolean on) {
        while (true) {
            long k = key(slot);
            if ((k & ~FLAGS) != fp || (k & EMPTYING) != 0) {
                return false;
            }
            long next = on ? k | flag : k & ~flag;
            if (k == next || compareAndSetKey(slot, k, next)) {
                return true;
            }
        }
    }

    /**
     * Sets {@code flag} of {@code slot} from {@code !on} to {@code on}, if it holds {@code fp}:
     * true for the one caller that made the change.
     */
    boolean swapFlag(int slot, long fp, long flag, boolean on) {
        while (true) {
            long k = key(slot);
            if ((k & ~FLAGS) != fp || (k & EMPTYING) != 0 || ((k & flag) != 0) == on) {
                return false;
            }
            if (compareAndSetKey(slot, k, on ? k | flag : k & ~flag)) {
                return true;
            }
        }
    }

    @FunctionalInterface
    interface SlotPredicate {
        boolean test(int slot, long key, long word);
    }

    @FunctionalInterface
    interface SlotVisitor {
        void visit(int slot, long key);
    }
}
