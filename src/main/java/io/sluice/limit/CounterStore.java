package io.sluice.limit;

import io.sluice.domain.DomainProbe;

/**
 * Where the limiter's words live: in the {@link CounterTable}'s slots ({@link HeapCounters}, the
 * default) or outside the process, where other processes and later runs see them. The
 * {@link DomainLimiter} keeps its table either way, for the budgets, the bound and flood
 * detection; a store only keeps the words.
 */
public interface CounterStore extends AutoCloseable {
    int ALLOWED = 0;
    int REFUSED = 1;
    /** The slot was retired under us: look the domain up again. */
    int RETIRED = 2;

    /**
     * Counts one query for {@code domain}, whose counter is {@code slot} of {@code table}, if
     * {@code budget} allows: {@link #ALLOWED}, {@link #REFUSED} or {@link #RETIRED}.
     */
    int acquire(CounterTable table, int slot, DomainProbe domain, Policy budget, Algorithm algorithm, long now);

    /**
     * Whether {@code slot}, whose word is {@code word}, may be retired: nothing it holds changes a
     * decision from {@code now} on. Off the loops. Once true, a loop still holding the slot must
     * either see {@link #RETIRED} or count correctly all the same.
     */
    default boolean idle(CounterTable table, int slot, long word, Policy p, Algorithm algorithm, long now) {
        return algorithm.idle(word, p, now);
    }

    /** Called once, before traffic, with the table whose slots {@link #acquire} will be given. */
    default void bind(CounterTable table) {
    }

    /** The janitor emptied {@code slot}: what the store keeps for it belongs to no domain now. Off the loops. */
    default void emptied(int slot) {
    }

    /** Removes state of ended windows kept outside the process; returns how many entries went. */
    default int prune(Algorithm algorithm, long now) {
        return 0;
    }

    /** Entries kept outside the process, for the metrics; -1 when the store keeps none. */
    default long size() {
        return -1;
    }

    /** Decisions the store could not make (and allowed), for the metrics. */
    default long failures() {
        return 0;
    }

    /** One phrase for the startup line. */
    String describe();

    @Override
    default void close() {
    }
}
