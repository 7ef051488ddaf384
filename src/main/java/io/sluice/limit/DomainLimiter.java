package io.sluice.limit;

import io.sluice.config.LimitSettings;
import io.sluice.domain.DomainKey;
import io.sluice.domain.DomainProbe;
import io.sluice.sketch.RecentHashes;
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
 * bounded. Its last tenth admits only domains asked for before (a {@link RecentHashes} doorkeeper), so that a
 * flood of domains asked once cannot keep a domain with repeated traffic out.
 */
public final class DomainLimiter {
    static final String OVERFLOW_NAME = "overflow.sluice.invalid";

    private final Algorithm algorithm;
    private final CounterStore store;
    private final Clock clock;
    /** Replaced whole by {@link #policies(PolicyTable)}, off the loops. */
    private volatile PolicyTable policies;
    private final int maxDomains;
    /**
     * The last tenth of the table, kept for domains the {@code doorkeeper} has seen before: a
     * flood of domains asked once fills the rest, and a domain asked again still gets a counter.
     */
    private final int reserve;
    /** The domains asked for lately, of those the table could not take at once: TinyLFU's doorkeeper. */
    private final RecentHashes doorkeeper;
    /** Each counter is its own key. */
    private final ConcurrentHashMap<DomainKey, Counter> counters;
    /** Counters in the table, kept apart from the map's own count to bound it without a scan. */
    private final AtomicInteger tracked = new AtomicInteger();
    private final Counter overflow;
    final LongAdder overflowHits = new LongAdder();
    private final RefusalLog refusals = new RefusalLog();
    /** Unlimited domains get counters too (never refused), so that the busiest domains include them. */
    private volatile boolean trackUnlimited;
    /** Whether any query is counted: some domain has a budget, or unlimited ones are tracked. */
    private volatile boolean counting;
    /** Flood detection, or null when off; set before traffic. */
    private volatile Floods floods;

    /**
     * @param defaultPolicy the budget of a domain without an override; may be {@link Policy#UNLIMITED}
     * @param overrides     budgets by registrable domain, {@link Policy#UNLIMITED} included
     */
    public DomainLimiter(LimitSettings.Algorithm algorithm, Policy defaultPolicy, Map<DomainKey, Policy> overrides,
                         int maxDomains, Clock clock) {
        this(Algorithm.of(algorithm), new HeapCounters(), new PolicyTable(defaultPolicy, overrides), maxDomains, clock);
    }

    public DomainLimiter(Algorithm algorithm, CounterStore store, PolicyTable policies, int maxDomains, Clock clock) {
        this.algorithm = algorithm;
        this.store = store;
        this.clock = clock;
        this.policies = policies;
        this.maxDomains = maxDomains;
        this.reserve = maxDomains / 10;
        this.doorkeeper = new RecentHashes(maxDomains, 16);
        this.counters = new ConcurrentHashMap<>(Math.min(maxDomains, 1 << 16));
        this.overflow = store.newCounter(DomainProbe.of(OVERFLOW_NAME), policies.defaultPolicy());
        this.counting = !policies.unlimited();
    }

    /**
     * False while no query can be counted (nothing limited, unlimited domains not tracked): then
     * the limit stage passes every query at the cost of this one read, though it stands ready for
     * a budget a reload or the admin API may set.
     */
    public boolean counting() {
        return counting;
    }

    /** The budgets in force. */
    public PolicyTable policies() {
        return policies;
    }

    /**
     * Puts {@code next} in force: the next lookup on every loop reads it, and every counter whose
     * budget it changes gets the new one in place, its word kept (a count carries over; a window of
     * another length starts afresh, as the algorithm sees another window). Off the loops, one
     * caller at a time ({@link Budgets} holds its lock).
     *
     * <p>A loop that read the old table may be adding a counter meanwhile; {@link #track} reads the
     * table again once its counter is in the map, and the map's volatile accesses order that read
     * after this write whenever the walk below missed the counter.
     */
    void policies(PolicyTable next) {
        policies = next;
        counting = trackUnlimited || !next.unlimited();
        for (Counter c : counters.values()) {
            repolicy(c, next);
        }
        overflow.policy = next.defaultPolicy();
    }

    /** Gives {@code c} its budget from {@code table}, and a flooded counter its cut of it. */
    private void repolicy(Counter c, PolicyTable table) {
        Policy p = table.of(c);
        if (!p.equals(c.policy)) {
            c.policy = p;
            Floods f = floods;
            if (f != null) {
                f.repolicy(c, p);
            }
        }
    }

    /** From now on the upstream's answers to each domain are watched for floods; before traffic. */
    public void watchFloods(LimitSettings.Flood settings) {
        floods = new Floods(settings, clock);
    }

    /** Flood detection, or null when off. */
    public Floods floods() {
        return floods;
    }

    /** The counter of {@code domain} if it has one; never makes one. */
    public Counter existing(DomainProbe domain) {
        return counters.get(domain);
    }

    /** Walks the table: off the loops. */
    void forEachCounter(java.util.function.Consumer<Counter> each) {
        counters.values().forEach(each);
    }

    /** Domains flooded now: a walk of the table, for scrapes and the admin API, off the loops. */
    public int floodedDomains() {
        int n = 0;
        for (Counter c : counters.values()) {
            if (c.flooded()) {
                n++;
            }
        }
        return n;
    }

    /** Whether {@code domain} (a registrable domain's name) is flooded now. */
    public boolean flooded(String domain) {
        Counter c = counters.get(DomainKey.of(domain));
        return c != null && c.flooded();
    }

    /** The counter of {@code domain}, made if it is new; null when the domain is never counted. */
    public Counter counterFor(DomainProbe domain) {
        Counter c = counters.get(domain);
        if (c != null) {
            return c;
        }
        Policy p = policies.of(domain);
        return p == Policy.UNLIMITED && !trackUnlimited ? null : track(domain, null, p);
    }

    /**
     * From now on unlimited domains have counters as well, which are never refused: for the
     * busiest domains ({@link TopDomains}), at the cost of a counter per domain within
     * {@code max-domains}. Before traffic.
     */
    public void trackUnlimited() {
        trackUnlimited = true;
        counting = true;
    }

    /** Counts a query for {@code c}'s domain in this process's store: true when it is allowed. */
    public boolean tryAcquire(Counter c) {
        long now = clock.epochNanos();
        while (true) {
            switch (store.acquire(c, algorithm, now)) {
                case CounterStore.ALLOWED:
                    return true;
                case CounterStore.REFUSED:
                    refusals.note(c, now);
                    return false;
                default:
                    c = successor(c);
                    if (c == null) {
                        return true; // its budget became unlimited meanwhile
                    }
            }
        }
    }

    /** The counter that took over from one the janitor retired: the same domain, maybe new; null when unlimited. */
    private Counter successor(Counter retired) {
        Counter c = counters.get(retired); // a retired counter is equal to its successor
        if (c != null) {
            return c;
        }
        Policy p = policies.of(retired);
        return p == Policy.UNLIMITED ? null : track(null, retired, p);
    }

    /**
     * Puts a new counter for the domain of {@code probe} (or else {@code key}) in the table, made
     * only once there is room: a flood of new domains past the bound allocates nothing. In the
     * table's last tenth only a domain seen before gets one (TinyLFU's admission, as a doorkeeper).
     */
    private Counter track(DomainProbe probe, DomainKey key, Policy p) {
        boolean override = p != policies.defaultPolicy();
        if (!override) {
            int n = tracked.incrementAndGet();
            if (n > maxDomains - reserve && (!doorkeeper.seenBefore(probe != null ? probe.hashCode() : key.hashCode())
                    || n > maxDomains)) {
                tracked.decrementAndGet();
                overflowHits.increment();
                return overflow;
            }
        }
        Counter fresh = probe != null ? store.newCounter(probe, p) : store.newCounter(key, p);
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
        repolicy(fresh, policies); // see policies(PolicyTable)
        return fresh;
    }

    /** Queues {@code c} for the refusal log (at most once per window): for refusals decided elsewhere. */
    public void noteRefusal(Counter c) {
        refusals.note(c, clock.epochNanos());
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
                Floods f = floods;
                if (f != null) {
                    f.forgotten(c);
                }
            }
        }
        store.prune(algorithm, now);
        return removed; // the overflow counter is not in the table: its word simply moves on
    }

    public CounterStore store() {
        return store;
    }

    /** How the words move: for a store that decides away from the limiter (Redis exact). */
    public Algorithm algorithm() {
        return algorithm;
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
