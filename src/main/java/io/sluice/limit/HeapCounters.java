package io.sluice.limit;

import io.sluice.domain.DomainProbe;

/**
 * Words kept in the counter table's slots, moved by compare-and-set: a decision is one read and at
 * most a few CAS attempts, never a lock. A store that keeps the words elsewhere too (Redis) mirrors
 * them there with {@link CounterTable#wordOf}, {@link CounterTable#compareAndSetWord} and
 * {@link CounterTable#replace}.
 */
public final class HeapCounters implements CounterStore {

    @Override
    public int acquire(CounterTable table, int slot, DomainProbe domain, Policy budget, Algorithm algorithm,
                       long now) {
        while (true) {
            long s = table.word(slot);
            if (s == CounterTable.DEAD) {
                return RETIRED;
            }
            long next = algorithm.acquire(s, budget, now);
            if (next == Algorithm.REFUSE) {
                return REFUSED;
            }
            if (table.compareAndSetWord(slot, s, next)) {
                return ALLOWED;
            }
        }
    }

    @Override
    public String describe() {
        return "memory";
    }
}
