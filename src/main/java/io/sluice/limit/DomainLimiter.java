package io.sluice.limit;

import io.sluice.config.LimitSettings;
import io.sluice.domain.DomainBytes;
import io.sluice.domain.DomainKey;
import io.sluice.domain.DomainProbe;
import io.sluice.sketch.RecentHashes;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Decides whether a query for a registrable domain is within its budget: the one place that knows
 * overrides, unlimited domains, the table bound and the overflow counter. The algorithm only moves
 * a slot's word.
 *
 * <p>Counters are slots of a {@link CounterTable}, found by the keyed hash of the event loop's
 * reusable {@link DomainProbe}: a decision allocates nothing, for a domain seen before or not. A
 * slot is named by its index, valid for one decision ({@link CounterTable} says why); what keeps a
 * domain longer (Redis calls, the refusal log) keeps its fingerprint and name with it. The table
 * holds at most {@code maxDomains} live counters: past that, new domains share one overflow
 * counter with the default limit until the {@link Janitor} frees room, so a flood of random
 * domains is limited as one and memory stays bounded. Its last tenth admits only domains asked for
 * before (a {@link RecentHashes} doorkeeper), so that a flood of domains asked once cannot keep a
 * domain with repeated traffic out.
 */
public final class DomainLimiter {
    /** No counter: the domain is not counted. */
    public static final int NONE = CounterTable.NONE;
    static final String OVERFLOW_NAME = "overflow.sluice.invalid";
    private static final byte[] REFUSAL_PREFIX = "sluice: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] REFUSAL_OVER = " over ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] OVERFLOW_TEXT = OVERFLOW_NAME.getBytes(StandardCharsets.US_ASCII);
    /** The longest text {@link #refusalText} writes. */
    public static final int MAX_REFUSAL_TEXT = 512 + DomainBytes.MAX_TEXT;

    private final Algorithm algorithm;
    private final CounterStore store;
    private final Clock clock;
    private final CounterTable table;
    /** Replaced whole when the budgets or the flood settings change, off the loops. */
    private volatile View view;
    private final int maxDomains;
    /**
     * The last tenth of the table, kept for domains the {@code doorkeeper} has seen before: a
     * flood of domains asked once fills the rest, and a domain asked again still gets a counter.
     */
    private final int reserve;
    /** The domains asked for lately, of those the table could not take at once: TinyLFU's doorkeeper. */
    private final RecentHashes doorkeeper;
    private final int overflow;
    private final long overflowFingerprint;
    /** The overflow counter's name, as stores keep its word; read, never changed. */
    private final DomainProbe overflowName = DomainProbe.of(OVERFLOW_NAME);
    final LongAdder overflowHits = new LongAdder();
    private final RefusalLog refusals = new RefusalLog();
    /** Unlimited domains get counters too (never refused), so that the busiest domains include them. */
    private volatile boolean trackUnlimited;
    /** Whether any query is counted: some domain has a budget, or unlimited ones are tracked. */
    private volatile boolean counting;
    /** Flood detection's state beside the flags, or null when off; set before traffic. */
    private volatile FloodState floods;

    /**
     * The rules in force as a decision reads them: the rules, each budget's flood cut, the text a
     * refusal gives of each, and each budget's (and cut's) twin as unverified queries see it while
     * {@code limits.verified-share} is set, made once per change so that no decision allocates.
     */
    private record View(LimitRules rules, Map<Policy, Policy> cuts, Map<Policy, Policy> unverified,
                        Map<Policy, byte[]> texts) {
        static View of(LimitRules rules, boolean watched) {
            PolicyTable table = rules.budgets();
            Map<Policy, Policy> cuts = new IdentityHashMap<>();
            Map<Policy, Policy> unverified = new IdentityHashMap<>();
            Map<Policy, byte[]> texts = new IdentityHashMap<>();
            List<Policy> all = new ArrayList<>(table.overrides().values());
            all.add(table.defaultPolicy());
            for (Policy p : all) {
                texts.put(p, p.toString().getBytes(StandardCharsets.US_ASCII));
                if (watched && p != Policy.UNLIMITED) {
                    Policy cut = cut(p, rules.flood());
                    cuts.put(p, cut);
                    texts.put(cut, cutText(cut).getBytes(StandardCharsets.US_ASCII));
                }
            }
            if (rules.verifiedShare() > 0) { // the budgets and their cuts; a refusal's text names the budget
                for (Policy p : texts.keySet()) {
                    unverified.put(p, p.unverified(rules.verifiedShare()));
                }
            }
            return new View(rules, cuts, unverified, texts);
        }

        PolicyTable table() {
            return rules.budgets();
        }
    }

    /**
     * @param defaultPolicy the budget of a domain without an override; may be {@link Policy#UNLIMITED}
     * @param overrides     budgets by registrable domain, {@link Policy#UNLIMITED} included
     */
    public DomainLimiter(LimitSettings.Algorithm algorithm, Policy defaultPolicy, Map<DomainKey, Policy> overrides,
                         int maxDomains, Clock clock) {
        this(Algorithm.of(algorithm), new HeapCounters(), LimitRules.of(new PolicyTable(defaultPolicy, overrides)),
                maxDomains, clock);
    }

    public DomainLimiter(Algorithm algorithm, CounterStore store, LimitRules rules, int maxDomains, Clock clock) {
        this.algorithm = algorithm;
        this.store = store;
        this.clock = clock;
        this.maxDomains = maxDomains;
        this.reserve = maxDomains / 10;
        this.doorkeeper = new RecentHashes(maxDomains, 16);
        this.table = new CounterTable(maxDomains);
        this.overflow = table.extraSlot();
        this.overflowFingerprint = CounterTable.fingerprint(overflowName.hash64());
        table.setExtraKey(overflowFingerprint);
        store.bind(table);
        this.view = View.of(rules, false);
        this.counting = !rules.budgets().unlimited();
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
        return view.table();
    }

    /** The rules in force: budgets, flood settings, action, dry run, exemptions. */
    public LimitRules rules() {
        return view.rules();
    }

    /** Puts {@code next} in force with the other rules as they are: {@link #rules(LimitRules)}. */
    void policies(PolicyTable next) {
        rules(view.rules().withBudgets(next));
    }

    /**
     * Puts {@code next} in force with one write: the next decision on every loop reads all of it,
     * and each counter's override flag is set or cleared to match, its word kept (a count carries
     * over; a window of another length starts afresh, as the algorithm sees another window). Off the
     * loops, one caller at a time ({@link Budgets} holds its lock).
     *
     * <p>A loop that read the old table may be claiming a slot meanwhile; {@link #track} reads the
     * table again once its slot is claimed, and the key's volatile accesses order that read after
     * this write whenever the walk below missed the slot.
     */
    void rules(LimitRules next) {
        view = View.of(next, floods != null);
        counting = trackUnlimited || !next.budgets().unlimited();
        PolicyTable t = next.budgets();
        table.forEachLive((slot, key) -> reflag(slot, key, t));
    }

    private void reflag(int slot, long key, PolicyTable t) {
        long fp = CounterTable.fingerprintOf(key);
        Policy o = t.override(fp);
        table.flag(slot, fp, CounterTable.OVERRIDDEN, o != null);
        FloodState f = floods;
        if (o == Policy.UNLIMITED && table.swapFlag(slot, fp, CounterTable.FLOODED, false) && f != null) {
            f.cleared(fp); // nothing to cut
        }
    }

    /**
     * From now on a domain whose slot is flagged flooded ({@link #markFlooded}) decides against its
     * cut, under {@code settings}; {@code state} is told of the flagged counters' ends. Before traffic.
     */
    public void watchFloods(LimitSettings.Flood settings, FloodState state) {
        LimitRules r = view.rules();
        floods = state;
        view = View.of(new LimitRules(r.budgets(), settings, r.action(), r.dryRun(), r.exempt(), r.verifiedShare(),
                r.slip()), true);
    }

    /** Flood detection's state, or null when off. */
    FloodState floods() {
        return floods;
    }

    /**
     * Flags {@code slot}, of the domain with {@code fp}, as flooded or not: true when this call
     * changed it (a compare-and-set, so each change is made, and logged, once).
     */
    public boolean markFlooded(int slot, long fp, boolean flooded) {
        return table.swapFlag(slot, fp, CounterTable.FLOODED, flooded);
    }

    /** What a flooded domain with policy {@code p} gets under {@code settings}: the flood's cut. */
    public static Policy cut(Policy p, LimitSettings.Flood settings) {
        return p.scaled(settings.fraction());
    }

    /** How the refusal text and the refusal log say a cut budget. */
    static String cutText(Policy cut) {
        return cut + " (cut: a random-subdomain flood)";
    }

    /**
     * The note a query carries to the flood watch with its answer: the slot it was counted on, and
     * 32 bits of the slot's fingerprint, which tell whether the slot still holds that domain then.
     */
    public long answerNote(int slot) {
        return fingerprint(slot) << 32 | slot;
    }

    /** The slot {@code note} ({@link #answerNote}) names while it still holds the noted domain; else {@link #NONE}. */
    public int notedSlot(long note) {
        int slot = (int) note;
        return (int) fingerprint(slot) == (int) (note >>> 32) ? slot : NONE;
    }

    /** The counter of {@code domain} if it has one; never makes one. */
    public int existing(DomainProbe domain) {
        return table.find(domain.hash64());
    }

    /** Domains flooded now: a walk of the table, for scrapes and the admin API, off the loops. */
    public int floodedDomains() {
        int[] n = {0};
        table.forEachLive((slot, key) -> n[0] += (key & CounterTable.FLOODED) != 0 ? 1 : 0);
        return n[0];
    }

    /** Whether {@code domain} (a registrable domain's name) is flooded now. */
    public boolean flooded(String domain) {
        int s = table.find(DomainProbe.of(domain).hash64());
        return s != NONE && flooded(s);
    }

    /** Whether the domain of {@code slot} is flooded now. */
    public boolean flooded(int slot) {
        return (table.key(slot) & CounterTable.FLOODED) != 0;
    }

    /** The counter of {@code domain}, made if it is new; {@link #NONE} when the domain is never counted. */
    public int counterFor(DomainProbe domain) {
        int s = table.find(domain.hash64());
        if (s != NONE) {
            return s;
        }
        PolicyTable t = view.table();
        Policy o = t.override(CounterTable.fingerprint(domain.hash64()));
        Policy p = o != null ? o : t.defaultPolicy();
        return p == Policy.UNLIMITED && !trackUnlimited ? NONE : track(domain, o != null);
    }

    /**
     * From now on unlimited domains have counters as well, which are never refused: for the
     * busiest domains ({@code top.TopDomains}), at the cost of a counter per domain within
     * {@code max-domains}. Before traffic.
     */
    public void trackUnlimited() {
        trackUnlimited = true;
        counting = true;
    }

    /** The policy of {@code slot}'s domain: its override, or the default. */
    public Policy policy(int slot) {
        long k = table.key(slot);
        return (k & CounterTable.OVERRIDDEN) != 0 ? policyOf(CounterTable.fingerprintOf(k)) : view.table().defaultPolicy();
    }

    /**
     * The policy of the domain whose fingerprint is {@code fp}: its override, or the default. For
     * work that outlives a decision (a Redis round, a sync pass): by then the domain's slot may
     * hold another domain, whose flags {@link #policy(int)} would read.
     */
    public Policy policyOf(long fp) {
        PolicyTable t = view.table();
        Policy o = t.override(fp);
        return o != null ? o : t.defaultPolicy();
    }

    /**
     * The budget of the domain whose fingerprint is {@code fp} and whose counter was {@code slot}:
     * {@link #budget(int)} while the slot holds it, else its policy (a slot given to another domain
     * since carries that domain's flags).
     */
    public Policy budgetOf(int slot, long fp) {
        return table.holds(slot, fp) ? budget(slot) : policyOf(fp);
    }

    /** The budget decisions of {@code slot} count against: the policy, or its cut while flooded. */
    public Policy budget(int slot) {
        Policy p = policy(slot);
        return flooded(slot) && p != Policy.UNLIMITED ? cut(p) : p;
    }

    /**
     * The budget a query of {@code slot}'s domain counts against: {@link #budget(int)}, or for a
     * query that is not {@code verified}, that budget as unverified queries see it
     * ({@code limits.verified-share}, {@link Policy#unverified}).
     */
    public Policy budget(int slot, boolean verified) {
        Policy p = budget(slot);
        return verified ? p : unverified(p);
    }

    /** {@code p} as unverified queries see it; {@code p} itself while no share is kept for verified ones. */
    public Policy unverified(Policy p) {
        View v = view;
        if (v.rules().verifiedShare() == 0 || p == Policy.UNLIMITED) {
            return p;
        }
        Policy u = v.unverified().get(p);
        return u != null ? u : p.unverified(v.rules().verifiedShare()); // a policy set since the view was made: rare
    }

    private Policy cut(Policy p) {
        View v = view;
        Policy c = v.cuts().get(p);
        return c != null ? c : floods != null ? cut(p, v.rules().flood()) : p; // a policy set since the view was made: rare
    }

    /**
     * Counts a query for {@code domain}, whose counter is {@code slot}, in this process's store at
     * {@code now}, this limiter's clock read by the caller (a query's stages share one reading,
     * {@link io.sluice.pipeline.Query#now}): true when it is allowed.
     */
    public boolean tryAcquire(int slot, DomainProbe domain, long now) {
        return tryAcquire(slot, domain, now, true);
    }

    /**
     * {@link #tryAcquire(int, DomainProbe, long)} for a query whose client proved its address, or
     * not ({@code verified}): see {@link #budget(int, boolean)}.
     */
    public boolean tryAcquire(int slot, DomainProbe domain, long now, boolean verified) {
        while (true) {
            Policy budget = budget(slot, verified);
            switch (store.acquire(table, slot, keptAs(slot, domain), budget, algorithm, now)) {
                case CounterStore.ALLOWED:
                    return true;
                case CounterStore.REFUSED:
                    noteRefusal(slot, domain);
                    return false;
                default: // retired under us: the domain's next counter
                    slot = counterFor(domain);
                    if (slot == NONE || policy(slot) == Policy.UNLIMITED) {
                        return true; // its budget became unlimited meanwhile
                    }
            }
        }
    }

    /** The name {@code slot}'s word is kept under outside the process: {@code domain}'s, or the overflow counter's. */
    public DomainProbe keptAs(int slot, DomainProbe domain) {
        return slot == overflow ? overflowName : domain;
    }

    /**
     * Puts a counter for {@code domain} in the table, made only once there is room: a flood of
     * new domains past the bound goes to the overflow counter. In the table's last tenth only a
     * domain seen before gets one (TinyLFU's admission, as a doorkeeper).
     */
    private int track(DomainProbe domain, boolean override) {
        // Checked, then claimed: loops claiming at once may pass the bound by one each. Overrides
        // are few and configured: they may exceed it.
        int n = table.live() + 1;
        if (!override && n > maxDomains - reserve && (!doorkeeper.seenBefore(domain.hashCode()) || n > maxDomains)) {
            overflowHits.increment();
            return overflow;
        }
        int slot = table.claim(domain.hash64(), override ? CounterTable.OVERRIDDEN : 0);
        if (slot == NONE) { // both buckets full: rare below the bound
            overflowHits.increment();
            return overflow;
        }
        View v;
        do { // see rules(LimitRules)
            v = view;
            reflag(slot, table.key(slot), v.table());
        } while (v != view);
        return slot;
    }

    /** Queues the domain of {@code slot} for the refusal log (at most once per window); {@code name} is read now. */
    public void noteRefusal(int slot, Object name) {
        noteRefusal(slot, CounterTable.fingerprintOf(table.key(slot)), name);
    }

    /** {@link #noteRefusal(int, Object)} for the domain with {@code fp}, whose counter {@code slot} was. */
    public void noteRefusal(int slot, long fp, Object name) {
        boolean holds = table.holds(slot, fp);
        Policy budget = holds ? budget(slot) : policyOf(fp); // as budgetOf, whose check the cut needs too
        refusals.note(fp, slot == overflow ? OVERFLOW_NAME : name, budget, holds && isCut(slot, budget),
                clock.epochNanos() / budget.windowNanos());
    }

    /** Whether {@code budget}, {@code slot}'s, is a flood's cut. */
    private boolean isCut(int slot, Policy budget) {
        return flooded(slot) && budget != policy(slot);
    }

    /**
     * Writes the Extended DNS Error text of a refusal of the domain {@code wire[0, length)}
     * ({@code slot}'s) into
     * {@code out}, {@link #MAX_REFUSAL_TEXT} long at least: {@code sluice: example.com over 100
     * queries per 1s}. Returns its length. Allocates nothing for the budgets in force.
     */
    public int refusalText(int slot, byte[] wire, int length, byte[] out) {
        Policy budget = budget(slot);
        byte[] b = view.texts().get(budget);
        if (b == null) {
            b = (isCut(slot, budget) ? cutText(budget) : budget.toString()).getBytes(StandardCharsets.US_ASCII);
        }
        int n = REFUSAL_PREFIX.length;
        System.arraycopy(REFUSAL_PREFIX, 0, out, 0, n);
        if (slot == overflow) {
            System.arraycopy(OVERFLOW_TEXT, 0, out, n, OVERFLOW_TEXT.length);
            n += OVERFLOW_TEXT.length;
        } else {
            n = DomainBytes.writeText(wire, length, out, n);
        }
        System.arraycopy(REFUSAL_OVER, 0, out, n, REFUSAL_OVER.length);
        n += REFUSAL_OVER.length;
        System.arraycopy(b, 0, out, n, b.length);
        return n + b.length;
    }

    /**
     * Retires the counters whose state no longer matters ({@link #emptyRetired} gives their room
     * back), then lets the store prune what it keeps elsewhere. Runs off the event loops.
     *
     * @return the counters retired
     */
    int evictIdle() {
        long now = clock.epochNanos();
        FloodState f = floods;
        int retired = table.retireIdle((slot, key, word) -> (f == null || (key & CounterTable.FLOODED) == 0
                        || !f.keeps(slot, policy(slot), now)) && store.idle(table, slot, word, policy(slot), algorithm, now),
                (slot, key) -> {
                    if (f != null && (key & CounterTable.FLOODED) != 0) {
                        f.forgotten(CounterTable.fingerprintOf(key));
                    }
                });
        store.prune(algorithm, now);
        return retired; // the overflow counter is not in the table: its word simply moves on
    }

    /** Empties the counters {@link #evictIdle} retired, a grace after it, for new domains to take. */
    void emptyRetired() {
        FloodState f = floods;
        table.emptyRetired((slot, key) -> {
            if (f != null) {
                f.emptied(slot, CounterTable.fingerprintOf(key));
            }
            store.emptied(slot);
        });
    }

    public CounterStore store() {
        return store;
    }

    /** Where the words are, for a store that keeps them in step with others (Redis). */
    public CounterTable table() {
        return table;
    }

    /** The fingerprint of {@code slot}'s domain, which a store keeps to know the slot is still its. */
    public long fingerprint(int slot) {
        return CounterTable.fingerprintOf(table.key(slot));
    }

    /** How the words move: for a store that decides away from the limiter (Redis exact). */
    public Algorithm algorithm() {
        return algorithm;
    }

    public Clock clock() {
        return clock;
    }

    /** Live counters in the table now. */
    public int tracked() {
        return table.live();
    }

    /** The overflow counter's slot: the domains the full table could not take. */
    public int overflowSlot() {
        return overflow;
    }

    RefusalLog refusals() {
        return refusals;
    }
}
