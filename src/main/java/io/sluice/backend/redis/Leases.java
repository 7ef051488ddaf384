package io.sluice.backend.redis;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Redis exact mode's leases: per counter slot, queries a round reserved in Redis beyond its own,
 * which any loop of this process then allows without a call, until they run out or their window
 * ends. A round takes one ({@link ExactDecisions}) only for a fixed window
 * ({@code Algorithm.leaseUntil}), a budget of 4,096 queries or more (a lease is
 * {@link SyncedCounters#heldAtMost}: 1/64 of it, as a power of two), and while the window's count
 * with the lease stays under half the budget. Every lease is counted in Redis before a query of it
 * is allowed, so the fleet never answers more than the budget; it answers at most a lease per
 * instance less, what is left of a lease when the domain's queries here stop.
 *
 * <p>A lease is its count, its domain's fingerprint and its end. One loop grants it: the count to
 * 0, the fingerprint and end, then the count with release. Any loop takes from it by
 * compare-and-set on the count, after reading the count with acquire and checking the rest, so a
 * query is allowed only from a lease of its own domain in force. A slot goes to another domain
 * only once its word is idle, after its window's end, when its lease has ended too.
 */
final class Leases {
    private static final VarHandle INTS = MethodHandles.arrayElementVarHandle(int[].class);
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

    private final int[] left;
    private final long[] fingerprints;
    private final long[] ends;

    Leases(int slots) {
        left = new int[slots];
        fingerprints = new long[slots];
        ends = new long[slots];
    }

    /** Takes one query from {@code slot}'s lease, if it is {@code fp}'s and in force at {@code now}. */
    boolean take(int slot, long fp, long now) {
        while (true) {
            int n = (int) INTS.getAcquire(left, slot);
            if (n <= 0 || !heldFor(slot, fp, now)) {
                return false;
            }
            if (INTS.compareAndSet(left, slot, n, n - 1)) {
                return true;
            }
        }
    }

    /** Whether {@code slot} has queries left of a lease of {@code fp}'s in force at {@code now}. */
    boolean holds(int slot, long fp, long now) {
        return (int) INTS.getAcquire(left, slot) > 0 && heldFor(slot, fp, now);
    }

    /**
     * Leases {@code queries} more to {@code slot}'s domain {@code fp} until {@code end}: added to
     * what is left of its lease with that end (two rounds out at once may both have taken one),
     * else in place of a lease ended or of another domain's.
     */
    void grant(int slot, long fp, long end, int queries) {
        while (true) {
            int n = (int) INTS.getAcquire(left, slot);
            if (n > 0 && (long) LONGS.getOpaque(fingerprints, slot) == fp && (long) LONGS.getOpaque(ends, slot) == end) {
                if (INTS.compareAndSet(left, slot, n, n + queries)) {
                    return;
                }
                continue;
            }
            INTS.setVolatile(left, slot, 0);
            LONGS.setOpaque(fingerprints, slot, fp);
            LONGS.setOpaque(ends, slot, end);
            INTS.setRelease(left, slot, queries);
            return;
        }
    }

    private boolean heldFor(int slot, long fp, long now) {
        return (long) LONGS.getOpaque(fingerprints, slot) == fp && now - (long) LONGS.getOpaque(ends, slot) < 0;
    }
}
