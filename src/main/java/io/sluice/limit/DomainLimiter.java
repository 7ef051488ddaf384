package io.sluice.limit;

import io.sluice.config.LimitSettings;
import io.sluice.domain.DomainKey;
import io.sluice.domain.DomainProbe;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Decides whether a query for a registrable domain is within its budget: the one place that knows
 * overrides, unlimited domains, the table bound and the overflow counter. The algorithm only moves
 * a counter's word.
 *
 * <p>Counters live in a {@link ConcurrentHashMap} searched with the event loop's reusable
 * {@link DomainProbe}, so a known domain costs a lookup and a CAS and allocates nothing; a key is
 * made only for a domain seen for the first time. The table holds at most {@code maxDomains}
 * counters: past that, new domains share one overflow counter with the default limit until the
 * {@link Janitor} frees room, so a flood of random domains is limited as one and memory stays
 * bounded.
 */
public final class DomainLimiter {
    static final String OVERFLOW_NAME = "overflow.sluice.invalid";

    private final Algorithm algorithm;
    private final CounterStore store;
    private final Clock clock;
    private final Policy defaultPolicy;
    private final Map<DomainKey, Policy> overrides;
    private final int maxDomains;
    /** Each counter is its own key. */
    private final ConcurrentHashMap<DomainKey, Counter> counters;
    /** Counters in the table, kept apart from the map's own count to bound it without a scan. */
    private final AtomicInteger tracked = new AtomicInteger();
    private final Counter overflow;
    final LongAdder overflowHits = new LongAdder();
    private final RefusalLog refusals = new RefusalLog();

    /**
     * @param defaultPolicy the budget of a domain without an override; may be {@link Policy#UNLIMITED}
     * @param overrides     budgets by registrable domain, {@link Policy#UNLIMITED} included
     */
    public DomainLimiter(LimitSettings.Algorithm algorithm, Policy defaultPolicy, Map<DomainKey, Policy> overrides,
                         int maxDomains, Clock clock) {
        this(Algorithm.of(algorithm), new HeapCounters(), defaultPolicy, overrides, maxDomains, clock);
    }

    public DomainLimiter(Algorithm algorithm, CounterStore store, Policy defaultPolicy,
                         Map<DomainKey, Policy> overrides, int maxDomains, Clock clock) {
        this.algorithm = algorithm;
        this.store = store;
        this.clock = clock;
        this.defaultPolicy = defaultPolicy;
        this.overrides = new HashMap<>(overrides);
        this.maxDomains = maxDomains;
        this.counters = new ConcurrentHashMap<>(Math.min(maxDomains, 1 << 16));
        this.overflow = new Counter(DomainProbe.of(OVERFLOW_NAME), defaultPolicy);
    }

    /**
     * Counts a query for {@code domain}. Returns null when it is allowed, or the counter whose
     * budget it is over (for the answer's text and the log).
     */
    public Counter refusedBy(DomainProbe domain) {
        long now = clock.epochNanos();
        Counter c = counters.get(domain);
        while (true) {
            if (c == null) {
                // A probe equals a key with the same bytes, so a HashMap can be searched with it.
                Policy p = overrides.getOrDefault(domain, defaultPolicy);
                if (p == Policy.UNLIMITED) {
                    return null; // not tracked at all
                }
                c = track(domain, p);
            }
            switch (store.acquire(c, algorithm, now)) {
                case CounterStore.ALLOWED:
                    return null;
                case CounterStore.REFUSED:
                    refusals.note(c, now);
                    return c;
                default:
                    c = counters.get(domain); // retired under us: its successor, or a new one
            }
        }
    }

    private Counter track(DomainProbe domain, Policy p) {
        boolean override = p != defaultPolicy;
        if (!override && tracked.incrementAndGet() > maxDomains) {
            tracked.decrementAndGet();
            overflowHits.increment();
            return overflow;
        }
        Counter fresh = new Counter(domain, p);
        Counter existing = counters.putIfAbsent(fresh, fresh);
        if (existing != null) {
            if (!override) {
                tracked.decrementAndGet();
            }
            return existing;
        }
        if (override) {
            tracked.incrementAndGet(); // overrides are few and configured: they may exceed the bound
        }
        return fresh;
    }

    /**
     * Removes the counters whose state no longer matters, then lets the store prune what it keeps
     * elsewhere. Runs off the event loops.
     */
    int evictIdle() {
        long now = clock.epochNanos();
        int removed = 0;
        for (Counter c : counters.values()) {
            if (store.release(c, algorithm, now) && counters.remove(c, c)) {
                tracked.decrementAndGet();
                removed++;
            }
        }
        store.prune(algorithm, now);
        return removed; // the overflow counter is not in the table: its word simply moves on
    }

    /** The budget of a registrable domain; {@link Policy#UNLIMITED} when it is never counted. */
    public Policy policyOf(DomainKey domain) {
        return overrides.getOrDefault(domain, defaultPolicy);
    }

    public CounterStore store() {
        return store;
    }

    public Clock clock() {
        return clock;
    }

    /** Counters in the table now. */
    public int tracked() {
        return tracked.get();
    }

    RefusalLog refusals() {
        return refusals;
    }
}
