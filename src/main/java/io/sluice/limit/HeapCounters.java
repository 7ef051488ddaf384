package io.sluice.limit;

/**
 * Words kept in the counters themselves, moved by compare-and-set: a decision is one read and at
 * most a few CAS attempts, never a lock.
 */
public final class HeapCounters implements CounterStore {

    @Override
    public int acquire(Counter c, Algorithm algorithm, long now) {
        while (true) {
            long s = c.get();
            if (s == Counter.DEAD) {
                return RETIRED;
            }
            long next = algorithm.acquire(s, c.budget(), now);
            if (next == Algorithm.REFUSE) {
                return REFUSED;
            }
            if (c.compareAndSet(s, next)) {
                return ALLOWED;
            }
        }
    }

    /** Swaps in {@link Counter#DEAD}, so that no update can land on a counter that has left the table. */
    @Override
    public boolean release(Counter c, Algorithm algorithm, long now) {
        long s = c.get();
        return s != Counter.DEAD && algorithm.idle(s, c.policy, now) && c.compareAndSet(s, Counter.DEAD);
    }

    @Override
    public String describe() {
        return "memory";
    }
}
