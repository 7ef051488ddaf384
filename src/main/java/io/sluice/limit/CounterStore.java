package io.sluice.limit;

import io.sluice.domain.DomainKey;
import io.sluice.domain.DomainProbe;

/**
 * Where the limiter's words live: in the {@link Counter} objects themselves ({@link HeapCounters},
 * the default) or outside the process, where other processes and later runs see them. The
 * {@link DomainLimiter} keeps its table of counters either way, for the policies, the bound and
 * the refusal texts; a store only keeps the words.
 */
public interface CounterStore extends AutoCloseable {
    int ALLOWED = 0;
    int REFUSED = 1;
    /** The counter left the table under us: look the domain up again. */
    int RETIRED = 2;

    /** Counts one query for {@code c} if its budget allows: {@link #ALLOWED}, {@link #REFUSED} or {@link #RETIRED}. */
    int acquire(Counter c, Algorithm algorithm, long now);

    /**
     * Whether {@code c} may leave the limiter's table: nothing it holds changes a decision from
     * {@code now} on. Once true, a loop still holding {@code c} must either see {@link #RETIRED}
     * or count correctly through it.
     */
    boolean release(Counter c, Algorithm algorithm, long now);

    /** A counter for a domain seen for the first time, as the limiter's loop probe holds it. */
    default Counter newCounter(DomainProbe domain, Policy p) {
        return new Counter(domain, p);
    }

    /** A counter taking over from one the janitor retired. */
    default Counter newCounter(DomainKey domain, Policy p) {
        return new Counter(domain, p);
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
