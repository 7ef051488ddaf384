package io.sluice.backend.redis;

import io.sluice.limit.Policy;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Redis exact mode's leases: per counter slot, queries a round reserved in Redis beyond its own,
 * which any loop of this process then allows without a call, until they run out or their window
 * ends. A round takes one ({@link ExactDecisions}) only for a fixed window
 * ({@code Algorithm.leaseUntil}), a budget of 4,096 queries or more (a lease is
 * {@link SyncedCounters#heldAtMost}: 1/64 of it, as a power of two), while the window's count with
 * the lease stays under half the budget and no other call that reserved in the domain's word is
 * out. Every lease is counted in Redis before a query of it is allowed, and spent only under the
 * budget it was taken under (a reload, or a flood's cut, ends it), so the fleet never answers
 * more than the budget. It answers less by what is left of a lease when the domain's queries here
 * stop, about a lease per loop of each instance (two loops' calls may reserve at once), and by a
 * lease Redis took in a call that then timed out here.
 *
 * <p>A lease is its count, its domain's fingerprint, its end and its budget. One loop grants it:
 * the count to 0, the rest, then the count with release. Any loop takes from it by compare-and-set
 * on the count, after reading the count with acquire and checking the rest, so a query is allowed
 * only from a lease of its own domain and budget in force. A slot that goes to another domain (its
 * word idle, or forgotten after a failed call) keeps the old lease's fingerprint, which the new
 * domain's queries do not match; only a take stalled across a grant to the new domain that left
 * the count it read could take one query of that lease.
 */
final class Leases {
    private static final VarHandle INTS = MethodHandles.arrayElementVarHandle(int[].class);
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle BUDGETS = MethodHandles.arrayElementVarHandle(Policy[].class);

    private final int[] left;
    private final long[] fingerprints;
    private final long[] ends;
    /** The budget each lease is a share of: a lease is spent only under the same (a reload or a flood cut ends it). */
    private final Policy[] budgets;

    Leases(int slots) {
        left = new int[slots];
        fingerprints = new long[slots];
        ends = new long[slots];
        budgets = new Policy[slots];
    }

    /**
     * Takes one query from {@code slot}'s lease, if it is {@code fp}'s, in force at {@code now}
     * and a share of {@code budget}, the domain's budget now.
     */
    boolean take(int slot, long fp, Policy budget, long now) {
        while (true) {
            int n = (int) INTS.getAcquire(left, slot);
            if (n <= 0 || !heldFor(slot, fp, now) || BUDGETS.getOpaque(budgets, slot) != budget) {
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
    void grant(int slot, long fp, long end, Policy budget, int queries) {
        while (true) {
            int n = (int) INTS.getAcquire(left, slot);
            if (n > 0 && (long) LONGS.getOpaque(fingerprints, slot) == fp && (long) LONGS.getOpaque(ends, slot) == end
                    && BUDGETS.getOpaque(budgets, slot) == budget) {
                if (INTS.compareAndSet(left, slot, n, n + queries)) {
                    return;
                }
                continue;
            }
            INTS.setVolatile(left, slot, 0);
            LONGS.setOpaque(fingerprints, slot, fp);
            LONGS.setOpaque(ends, slot, end);
            BUDGETS.setOpaque(budgets, slot, budget);
            INTS.setRelease(left, slot, queries);
            return;
        }
    }

    private boolean heldFor(int slot, long fp, long now) {
        return (long) LONGS.getOpaque(fingerprints, slot) == fp && now - (long) LONGS.getOpaque(ends, slot) < 0;
    }
}
