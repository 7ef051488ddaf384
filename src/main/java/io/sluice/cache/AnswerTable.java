package io.sluice.cache;

import io.sluice.sketch.CacheLines;
import io.sluice.sketch.KeyedHash;
import io.sluice.sketch.RecentHashes;
import io.sluice.wire.AnswerKey;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The cache's answers without an object per answer: their bytes in rings of byte arrays taken at
 * start, one ring per writer (each event loop), found through one index of four-slot buckets, a
 * cache line each, two buckets to a name. Nothing for the collector to trace or copy, so a flood of
 * new answers leaves no pause behind it; a lookup reads one line of the index (two for a name in
 * its second bucket, and for a miss) and the entry's own bytes. Hand-written rather than a cache
 * of objects such as Caffeine's: an object per answer is one more for the collector to trace and
 * copy, and a flood's new answers make those copies the longest pauses (docs/benchmarks.md, "Soak").
 *
 * <p><b>The rings.</b> A writer writes its entries one after another in its own ring, at an
 * ever-growing position (the byte offset is that position modulo the ring's size); an entry never
 * straddles the end of one of the ring's arrays, the rest of which is skipped. The writer moves the
 * ring's {@link #heads head} on past the entry, fences, then copies the entry in; so the bytes at
 * position {@code p} are the entry written there exactly while {@code head - p <= ringBytes}. That
 * is the concurrency invariant, and a reader's only check: it copies the entry out, fences, and
 * reads the head again; an entry the writer began to overwrite meanwhile fails the check and is a
 * miss (a seqlock whose sequence is the ring's position). A ring has one writer, its loop, so no
 * write ever lands behind the head it announced: two writers sharing a ring would let one, stalled
 * between its reservation and its copy while the other went round, overwrite an entry the check
 * passes. A copy is never trusted before the check nor served after failing it, and a torn one
 * cannot throw: every length in it is bounded before use.
 *
 * <p><b>The index.</b> A slot is the key's 64-bit keyed hash and a word: the entry's ring and
 * position and a 2-bit count of hits ({@link #USES}). A writer sets the hash, then publishes the
 * word with release semantics, after the entry's bytes; a reader that finds the hash reads the word
 * with acquire semantics, then checks the entry's own hash and key: a slot half rewritten by another
 * loop only makes a miss. Two loops storing at once into one bucket may lose one of the answers: it
 * is asked for again.
 *
 * <p><b>What stays.</b> An answer stored goes into the slot of the same key in either of its
 * buckets, else a free one (empty, or its entry overwritten by its ring) in whichever of the two
 * has more, so that the index fills evenly. Into two buckets full, it takes first a slot whose
 * answer may no longer be served even stale (its time read from the ring); into two buckets full
 * of answers that may still be served it must first be admitted:
 * only a name stored before, lately, gets in ({@link RecentHashes}, TinyLFU's doorkeeper), so that
 * a flood of names asked once leaves the cache as it was. An admitted answer takes, in the one of its
 * two buckets with fewer hits, the first slot without hits from a starting point its key chooses, taking a hit off
 * each one passed (the CLOCK algorithm, four slots to a clock, counts up to 3). A hit adds one to
 * its slot, by compare-and-set, until it is 3: a hot name's slot is written only as the hand passes
 * it, not on every hit. A ring would still overwrite hot answers as it wraps, so a hit on an entry
 * in the older half of its ring copies it to the head of the reader's: a hot answer is copied once
 * per half turn.
 *
 * <p><b>A question's networks.</b> The answers to one question for many Client Subnet networks
 * ({@link AnswerKey#subnet}) are found in the buckets of a few placings, not each network's own:
 * a placing is the question's hash with one of {@link #placings} numbers, which the network's
 * hash picks. So one question keeps at most {@code 2 * 4 * placings} answers, whatever number
 * of networks asks it: past that, a network's answer takes the room of another in the same
 * buckets, by the same rules as any answer (Unbound bounds its tree of networks per name alike:
 * {@code max-ecs-tree-size}). A slot still holds the key's own hash, which a lookup matches.
 */
final class AnswerTable {
    /** Bytes of an entry's header. */
    static final int HEADER = 64;
    static final int TOTAL_AT = 0;
    static final int KEY_LENGTH_AT = 4;
    static final int TTL_COUNT_AT = 6;
    static final int HASH_AT = 8;
    static final int STORED_AT = 16;
    static final int FRESH_UNTIL_AT = 24;
    static final int KEEP_UNTIL_AT = 32;
    static final int RECHECK_AT = 40;
    static final int MESSAGE_LENGTH_AT = 48;
    static final int OPT_AT = 52;
    /** 1 when the answer is served only to the question's letters exactly (CachedAnswer#servesCase). */
    static final int CASE_BOUND_AT = 56;
    /** Writers (loops) at most: the ring's number takes 10 bits of a slot's word. */
    static final int MAX_WRITERS = 1024;

    private static final int BUCKET_SLOTS = 4;
    private static final int LONGS_PER_BUCKET = 2 * BUCKET_SLOTS;
    private static final int RING_SHIFT = 52;
    private static final long POSITION = (1L << RING_SHIFT) - 1;
    private static final int USES_SHIFT = 62;
    /** One hit, in a slot's word. */
    private static final long USES = 1L << USES_SHIFT;
    private static final long MAX_USES = 3;
    private static final long WHERE = USES - 1;
    /** The largest array of a ring. */
    private static final int MAX_SEGMENT = 1 << 30;
    /** Names a generation of the doorkeeper holds at most: 2^27 bits of filter, 16 bits a name. */
    private static final long DOORKEEPER_NAMES = (1L << 27) / 16;
    /** The position of a ring's first entry; 0 in a word is an empty slot. */
    private static final long FIRST = 8;
    /** Longs between two rings' heads: each on its own pair of cache lines. */
    private static final int HEAD_STRIDE = 16;
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);

    private final long[] index;
    private final int pad;
    private final int buckets;
    /** The placings of one question's networks ({@link #place}): its networks' answers fill at most their buckets. */
    private final int placings;
    /** Each writer's ring: its arrays. */
    private final byte[][][] rings;
    private final int segmentBytes;
    private final long ringBytes;
    private final int maxEntry;
    /** Each ring's head, the position past its last entry begun, every {@link #HEAD_STRIDE} longs. */
    private final long[] heads;
    private final LongAdder evictions;
    private final LongAdder rejected;
    /** The names stored into a full bucket lately: the second such store is admitted. */
    private final RecentHashes doorkeeper;

    /**
     * @param maxEntries answers at most, rounded up to a multiple of four
     * @param bytesEach  bytes of each ring, in equal arrays of at most 1 GiB (rounded down to share
     *                   evenly among them)
     * @param writers    the threads that store answers, each with its own ring ({@link #MAX_WRITERS} at most)
     * @param evictions  counts answers replaced for room, or lost to a ring's wrap
     * @param rejected   counts answers not admitted into a full bucket
     * @param networksPerQuestion answers to one question for Client Subnet networks at most,
     *                   rounded up to a multiple of 8 (two buckets' slots)
     */
    AnswerTable(int maxEntries, long bytesEach, int writers, LongAdder evictions, LongAdder rejected,
            int networksPerQuestion) {
        if (writers < 1 || writers > MAX_WRITERS) {
            throw new IllegalArgumentException("writers " + writers);
        }
        this.buckets = Math.max(1, (maxEntries + BUCKET_SLOTS - 1) / BUCKET_SLOTS);
        this.placings = Math.max(1, (networksPerQuestion + 2 * BUCKET_SLOTS - 1) / (2 * BUCKET_SLOTS));
        this.pad = CacheLines.padOf(long[].class, Long.BYTES);
        this.index = new long[pad + buckets * LONGS_PER_BUCKET];
        int segments = (int) ((bytesEach + MAX_SEGMENT - 1) / MAX_SEGMENT);
        this.segmentBytes = (int) (bytesEach / segments);
        this.ringBytes = (long) segments * segmentBytes;
        this.rings = new byte[writers][segments][segmentBytes];
        this.maxEntry = segmentBytes / 4;
        this.heads = new long[(writers + 1) * HEAD_STRIDE];
        for (int w = 0; w < writers; w++) {
            heads[(w + 1) * HEAD_STRIDE] = FIRST;
        }
        this.evictions = evictions;
        this.rejected = rejected;
        // a generation no longer than the doorkeeper's largest filter holds at 16 bits a name
        this.doorkeeper = new RecentHashes(Math.min(4L * buckets, DOORKEEPER_NAMES), 16);
    }

    /**
     * Copies the entry kept for {@code key} into {@code into}, which then names its slot; false
     * when there is none, it is being overwritten, or at {@code now} it may no longer be served,
     * even stale (such an entry gains no hit and is not moved: it waits to be replaced). Counts
     * the hit, and copies an entry from the older half of its ring to the head of {@code writer}'s.
     */
    boolean find(AnswerKey key, CachedAnswer into, int writer, long now) {
        long hash = key.hash();
        long place = place(key);
        int one = firstSlot(place);
        int two = secondSlot(place);
        return findIn(one, hash, key, into, writer, now) || two != one && findIn(two, hash, key, into, writer, now);
    }

    private boolean findIn(int first, long hash, AnswerKey key, CachedAnswer into, int writer, long now) {
        for (int i = 0; i < BUCKET_SLOTS; i++) {
            int at = first + 2 * i;
            if ((long) LONGS.getOpaque(index, at) != hash) {
                continue;
            }
            long word = (long) LONGS.getAcquire(index, at + 1);
            if ((word & POSITION) == 0 || !intact(word)) {
                continue;
            }
            int length = copy(word, into.entry());
            VarHandle.acquireFence(); // the copy's reads before the check's
            if (length < 0 || !intact(word) || !into.read(length, hash, key) || now - into.keepUntil() >= 0) {
                continue;
            }
            if (word >>> USES_SHIFT < MAX_USES && LONGS.compareAndSet(index, at + 1, word, word + USES)) {
                word += USES;
            }
            into.foundAt(at, word);
            if (head(ring(word)) - (word & POSITION) > ringBytes / 2) {
                replace(writer, into);
            }
            return true;
        }
        return false;
    }

    /**
     * Keeps the entry {@code answer} holds (found, and changed or to be moved), in the slot it was
     * found in while that still names the entry found (whatever its hits meanwhile), else not at
     * all (a newer answer another loop kept meanwhile stays); {@code answer} then names the slot's
     * new word. Its bytes may still be written to the ring when another loop changes the slot in
     * between: they are never named.
     */
    void replace(int writer, CachedAnswer answer) {
        long found = answer.word() & WHERE;
        int at = answer.slot() + 1;
        if (((long) LONGS.getVolatile(index, at) & WHERE) != found) {
            return;
        }
        long where = write(writer, answer);
        if (where == 0) {
            return;
        }
        while (true) { // another loop's hit, or a CLOCK hand, may move the count: the entry is the same
            long word = (long) LONGS.getVolatile(index, at);
            if ((word & WHERE) != found) {
                return;
            }
            long next = where | word & ~WHERE;
            if (LONGS.compareAndSet(index, at, word, next)) {
                answer.foundAt(answer.slot(), next);
                return;
            }
        }
    }

    /**
     * Keeps the entry {@code answer} holds, built for {@code key}, making room in one of its
     * buckets, unless it is not admitted there or is larger than a quarter of one of a ring's
     * arrays. The time it was built at is the time it is kept at.
     */
    void put(int writer, AnswerKey key, CachedAnswer answer) {
        if (answer.length() > maxEntry) {
            rejected.increment();
            return;
        }
        long hash = key.hash();
        int at = room(hash, place(key), answer.storedAt());
        if (at < 0) {
            rejected.increment();
            return;
        }
        long uses = (long) LONGS.getOpaque(index, at) == hash
                ? (long) LONGS.getVolatile(index, at + 1) & ~WHERE : 0;
        long where = write(writer, answer);
        if (where == 0) {
            return;
        }
        LONGS.setOpaque(index, at, hash);
        LONGS.setRelease(index, at + 1, where | uses);
    }

    /** Which answers {@link #remove} and {@link #forEach} take, by the bytes of their key ({@link AnswerKey}). */
    @FunctionalInterface
    interface KeyFilter {
        /** Every answer: {@link #remove} then reads no entry. */
        KeyFilter ALL = (entry, keyAt, keyLength) -> true;

        boolean test(byte[] entry, int keyAt, int keyLength);

        /**
         * The keys of {@code name} (wire form, lower case, its root label included), of every type or
         * of {@code type} only, and with {@code subtree} those of every name under it too: what an
         * operator's flush removes ({@link AnswerTable#remove}).
         */
        static KeyFilter names(byte[] name, int type, boolean subtree) {
            return (b, at, length) -> {
                int nameLength = AnswerKey.nameLength(b, at, length);
                if (nameLength < name.length || !subtree && nameLength != name.length
                        || type >= 0 && ((b[at + nameLength] & 0xFF) << 8 | b[at + nameLength + 1] & 0xFF) != type) {
                    return false;
                }
                int from = at + nameLength - name.length;
                if (!Arrays.equals(b, from, from + name.length, name, 0, name.length)) {
                    return false;
                }
                int i = at; // the tail must start at a label: walk the labels to it
                while (i < from) {
                    i += (b[i] & 0xFF) + 1;
                }
                return i == from;
            };
        }
    }

    /**
     * Empties every slot whose answer {@code which} picks: the admin thread's, never a loop's.
     * Each slot is emptied by compare-and-set only while it still names the entry picked (a loop's
     * hit may move its count meanwhile; that is retried), so an answer a loop stores meanwhile
     * stays, and a lookup that read the slot before may still serve the answer it was copying.
     *
     * @return the answers removed
     */
    long remove(KeyFilter which) {
        return scan(which, which != KeyFilter.ALL, (at, word, entry, length) -> {
            long where = word & WHERE;
            for (long w = word; (w & WHERE) == where; w = (long) LONGS.getVolatile(index, at)) {
                if (LONGS.compareAndSet(index, at, w, 0L)) {
                    return true;
                }
            }
            return false;
        });
    }

    /** Calls {@code found} with a checked copy of each entry {@code which} picks: off the loops. */
    void forEach(KeyFilter which, EntryVisitor found) {
        scan(which, true, (at, word, entry, length) -> {
            found.visit(entry, length);
            return true;
        });
    }

    @FunctionalInterface
    interface EntryVisitor {
        void visit(byte[] entry, int length);
    }

    /** What {@link #scan} does with a slot (its word's index, the word) and its entry: whether it counts. */
    @FunctionalInterface
    private interface SlotAction {
        boolean apply(int at, long word, byte[] entry, int length);
    }

    /**
     * Applies {@code action} to each slot whose entry {@code which} picks. With {@code copy}, the
     * entry is copied out and checked as a lookup checks it (an entry its ring overwrote meanwhile
     * is gone already); without, {@code which} must be {@link KeyFilter#ALL} and no entry is read.
     */
    private long scan(KeyFilter which, boolean copy, SlotAction action) {
        byte[] entry = copy ? new byte[CachedAnswer.MAX_BYTES] : null;
        long n = 0;
        for (int at = pad + 1; at < index.length; at += 2) {
            long word = (long) LONGS.getVolatile(index, at);
            if ((word & POSITION) == 0 || !intact(word)) {
                continue;
            }
            int length = 0;
            if (copy) {
                length = copy(word, entry);
                VarHandle.acquireFence(); // the copy's reads before the check's
                if (length < 0 || !intact(word)) {
                    continue;
                }
                int keyLength = Short.toUnsignedInt((short) SHORT.get(entry, KEY_LENGTH_AT));
                if (HEADER + keyLength > length || !which.test(entry, HEADER, keyLength)) {
                    continue;
                }
            }
            if (action.apply(at, word, entry, length)) {
                n++;
            }
        }
        return n;
    }

    /** Answers the index can name at most: max-entries rounded up to whole buckets. */
    int capacity() {
        return buckets * BUCKET_SLOTS;
    }

    /** Answers the index names now that their rings still hold (expired ones included). */
    long entries() {
        long n = 0;
        for (int at = pad; at < index.length; at += 2) {
            long word = (long) LONGS.getOpaque(index, at + 1);
            if ((word & POSITION) != 0 && intact(word)) {
                n++;
            }
        }
        return n;
    }

    /** Bytes the index and its doorkeeper took at start: what {@code CacheSettings.indexBytes} counts for the heap check. */
    long indexBytes() {
        return (long) (index.length - pad) * Long.BYTES + doorkeeper.bytes();
    }

    /** Bytes of the rings written so far, at most their size. */
    long bytes() {
        long n = 0;
        for (int w = 0; w < rings.length; w++) {
            n += Math.min(head(w) - FIRST, ringBytes);
        }
        return n;
    }

    /**
     * The hash whose buckets {@code key}'s answer goes in: its own, or for a key that names a
     * network, its question's with the placing its network picks.
     */
    private long place(AnswerKey key) {
        return key.subnet()
                ? KeyedHash.with(key.questionHash(), Long.remainderUnsigned(key.hash(), placings))
                : key.hash();
    }

    /**
     * The slot for {@code hash} to go in at {@code now}, in the buckets of {@code place}: its own
     * in either of them, else a free one (empty, or its entry overwritten by its ring) in the
     * bucket with more of them, else one whose answer may no longer be served, else, when the
     * doorkeeper admits it, the clock's of the one with fewer hits; -1 when not admitted.
     */
    private int room(long hash, long place, long now) {
        int one = firstSlot(place);
        int two = secondSlot(place);
        // in find's order: of two slots a race left with one name, the one a lookup finds is replaced
        for (int i = 0; i < 2 * BUCKET_SLOTS; i++) {
            int at = (i < BUCKET_SLOTS ? one : two) + 2 * (i & (BUCKET_SLOTS - 1));
            if ((long) LONGS.getOpaque(index, at) == hash) {
                return at;
            }
        }
        int freeOne = free(one);
        int freeTwo = two == one ? 0 : free(two);
        if (freeOne > 0 || freeTwo > 0) {
            int freer = freeOne >= freeTwo ? one : two;
            int at = takeFree(freer);
            if (at < 0 && two != one) {
                at = takeFree(freer == one ? two : one); // other loops took those since
            }
            if (at >= 0) {
                return at;
            }
        }
        int dead = dead(one, now);
        if (dead < 0 && two != one) {
            dead = dead(two, now);
        }
        if (dead >= 0) {
            evictions.increment();
            return dead;
        }
        if (!doorkeeper.seenBefore((int) (hash ^ hash >>> 32))) {
            return -1;
        }
        return clock(two == one || uses(one) <= uses(two) ? one : two, (int) hash & (BUCKET_SLOTS - 1));
    }

    /** The hits of the bucket at {@code first}'s slots: the hand goes where they are fewer. */
    private int uses(int first) {
        int n = 0;
        for (int i = 0; i < BUCKET_SLOTS; i++) {
            n += (int) ((long) LONGS.getOpaque(index, first + 2 * i + 1) >>> USES_SHIFT);
        }
        return n;
    }

    /** Slots of the bucket at {@code first} that are empty, or whose entry its ring overwrote. */
    private int free(int first) {
        int n = 0;
        for (int i = 0; i < BUCKET_SLOTS; i++) {
            long word = (long) LONGS.getOpaque(index, first + 2 * i + 1);
            if ((word & POSITION) == 0 || !intact(word)) {
                n++;
            }
        }
        return n;
    }

    /**
     * The first slot of the bucket at {@code first} whose answer may not be served at {@code now},
     * even stale; -1 when none. Read without the check a lookup makes: a time torn by the ring's
     * writer at worst replaces an answer early, as an eviction would.
     */
    private int dead(int first, long now) {
        for (int i = 0; i < BUCKET_SLOTS; i++) {
            long word = (long) LONGS.getOpaque(index, first + 2 * i + 1);
            long pos = word & POSITION;
            int offset = (int) (pos % ringBytes % segmentBytes);
            if (pos != 0 && offset + HEADER <= segmentBytes
                    && now - (long) LONG.get(segment(ring(word), pos), offset + KEEP_UNTIL_AT) >= 0) {
                return first + 2 * i;
            }
        }
        return -1;
    }

    /** The first free slot of the bucket at {@code first}; -1 when other loops took them since {@link #free}. */
    private int takeFree(int first) {
        for (int i = 0; i < BUCKET_SLOTS; i++) {
            long word = (long) LONGS.getOpaque(index, first + 2 * i + 1);
            if ((word & POSITION) == 0) {
                return first + 2 * i;
            }
            if (!intact(word)) {
                evictions.increment();
                return first + 2 * i;
            }
        }
        return -1;
    }

    /**
     * The slot the CLOCK hand of the bucket at {@code first}, starting at slot {@code hand}, finds
     * without hits, taking one off each slot it passes.
     */
    private int clock(int first, int hand) {
        for (int step = 0; step < BUCKET_SLOTS * (MAX_USES + 1); step++) {
            int at = first + 2 * ((hand + step) & (BUCKET_SLOTS - 1));
            long word = (long) LONGS.getVolatile(index, at + 1);
            if (word >>> USES_SHIFT == 0) {
                evictions.increment();
                return at;
            }
            LONGS.compareAndSet(index, at + 1, word, word - USES);
        }
        evictions.increment(); // other loops' hits kept every count up: the hand's first
        return first + 2 * hand;
    }

    /**
     * Moves {@code writer}'s head past room for the entry {@code answer} holds (at most
     * {@link #maxEntry} bytes), then copies it in: its ring and position as a slot's word holds
     * them, or 0 once the ring's position has used its 52 bits (4 PiB written: the ring then keeps
     * nothing more, rather than let a position spill into the ring's number). Only
     * {@code writer}'s thread calls it.
     */
    private long write(int writer, CachedAnswer answer) {
        int length = answer.length();
        long head = head(writer);
        int offset = (int) (head % ringBytes % segmentBytes);
        long pos = offset + length > segmentBytes ? head + segmentBytes - offset : head; // the array's rest is skipped
        if (pos + length > POSITION) {
            return 0;
        }
        LONGS.setRelease(heads, (writer + 1) * HEAD_STRIDE, pos + length);
        VarHandle.storeStoreFence(); // the new head before any byte it makes stale
        System.arraycopy(answer.entry(), 0, segment(writer, pos), (int) (pos % ringBytes % segmentBytes), length);
        return (long) writer << RING_SHIFT | pos;
    }

    private long head(int writer) {
        return (long) LONGS.getVolatile(heads, (writer + 1) * HEAD_STRIDE);
    }

    private static int ring(long word) {
        return (int) ((word & WHERE) >>> RING_SHIFT);
    }

    /** Whether the entry {@code word} names is not yet reserved over by a later one of its ring. */
    private boolean intact(long word) {
        return head(ring(word)) - (word & POSITION) <= ringBytes;
    }

    /** Copies the entry {@code word} names into {@code to}: its length, or -1 if what is there cannot be one. */
    private int copy(long word, byte[] to) {
        long pos = word & POSITION;
        byte[] segment = segment(ring(word), pos);
        int offset = (int) (pos % ringBytes % segmentBytes);
        if (offset + HEADER > segmentBytes) {
            return -1;
        }
        int length = (int) INT.get(segment, offset + TOTAL_AT);
        if (length < HEADER || length > to.length || length > segmentBytes - offset) {
            return -1;
        }
        System.arraycopy(segment, offset, to, 0, length);
        return length;
    }

    private byte[] segment(int writer, long pos) {
        return rings[writer][(int) (pos % ringBytes / segmentBytes)];
    }

    /** The first long of {@code hash}'s first bucket: its high half picks it, by multiply-shift. */
    private int firstSlot(long hash) {
        return pad + (int) (((hash >>> 32) * buckets) >>> 32) * LONGS_PER_BUCKET;
    }

    /** The first long of {@code hash}'s second bucket: its low half picks it. */
    private int secondSlot(long hash) {
        return pad + (int) (((hash & 0xFFFF_FFFFL) * buckets) >>> 32) * LONGS_PER_BUCKET;
    }
}
