package io.sluice.forward;

import java.util.Arrays;

/**
 * The deadlines of one loop's attempts, in a timing wheel of {@link #BUCKETS} buckets a tick wide:
 * adding is a store into the bucket of the deadline's tick, and expiring sweeps the buckets from the
 * last one swept up to the current one. Attempts wait different times (each upstream's retransmit
 * timeout, doubled per loss), so send order is not deadline order; the wheel needs no order and no
 * timer object per query. An entry is (slot index, serial), as {@link InFlightTable} keeps them; a
 * deadline more than a turn of the wheel away stays in its bucket through the sweeps until its turn.
 * Confined to its loop.
 */
final class DeadlineWheel {
    static final long NONE = -1;
    private static final int BUCKETS = 1024;
    private static final int FIRST_CAPACITY = 16;

    private final long tickNanos;
    private final long[][] entries = new long[BUCKETS][];
    private final long[][] deadlines = new long[BUCKETS][];
    private final int[] counts = new int[BUCKETS];
    /** The tick whose bucket the next sweep starts from: every earlier one is swept. */
    private long cursor;
    /** Entries swept out as due and not yet handed out, as a ring. */
    private long[] due = new long[FIRST_CAPACITY];
    private int dueHead;
    private int dueCount;

    DeadlineWheel(long tickNanos, long now) {
        this.tickNanos = tickNanos;
        this.cursor = Math.floorDiv(now, tickNanos);
    }

    void add(int slot, int serial, long deadlineNanos) {
        long tick = Math.max(cursor, Math.floorDiv(deadlineNanos, tickNanos));
        int b = (int) (tick & (BUCKETS - 1));
        if (entries[b] == null) {
            entries[b] = new long[FIRST_CAPACITY];
            deadlines[b] = new long[FIRST_CAPACITY];
        } else if (counts[b] == entries[b].length) {
            entries[b] = Arrays.copyOf(entries[b], counts[b] * 2);
            deadlines[b] = Arrays.copyOf(deadlines[b], counts[b] * 2);
        }
        entries[b][counts[b]] = ((long) slot << 32) | (serial & 0xFFFFFFFFL);
        deadlines[b][counts[b]] = deadlineNanos;
        counts[b]++;
    }

    /** The next entry whose deadline is {@code now} or earlier, taken out, or {@link #NONE}. */
    long pollDue(long now) {
        if (dueCount == 0) {
            sweep(now);
        }
        if (dueCount == 0) {
            return NONE;
        }
        long e = due[dueHead];
        dueHead = (dueHead + 1) & (due.length - 1);
        dueCount--;
        return e;
    }

    /** Moves what is due in the buckets up to {@code now}'s into {@link #due}; the buckets before {@code now}'s are done with. */
    private void sweep(long now) {
        long last = Math.floorDiv(now, tickNanos);
        if (last - cursor >= BUCKETS) {
            cursor = last - BUCKETS + 1; // after a long sleep: each bucket once
        }
        while (true) {
            int b = (int) (cursor & (BUCKETS - 1));
            int kept = 0;
            for (int i = 0; i < counts[b]; i++) {
                if (deadlines[b][i] - now <= 0) {
                    queueDue(entries[b][i]);
                } else { // later this tick, or a turn of the wheel or more away
                    entries[b][kept] = entries[b][i];
                    deadlines[b][kept] = deadlines[b][i];
                    kept++;
                }
            }
            counts[b] = kept;
            if (cursor == last) {
                return; // the current tick's bucket: swept again next time
            }
            cursor++;
        }
    }

    private void queueDue(long entry) {
        if (dueCount == due.length) {
            long[] bigger = new long[due.length * 2];
            for (int i = 0; i < dueCount; i++) {
                bigger[i] = due[(dueHead + i) & (due.length - 1)];
            }
            due = bigger;
            dueHead = 0;
        }
        due[(dueHead + dueCount) & (due.length - 1)] = entry;
        dueCount++;
    }

    static int slot(long entry) {
        return (int) (entry >>> 32);
    }

    static int serial(long entry) {
        return (int) entry;
    }
}
