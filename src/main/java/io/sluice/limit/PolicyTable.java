package io.sluice.limit;

import io.sluice.domain.DomainKey;
import io.sluice.domain.DomainProbe;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;

/**
 * Every domain's budget as the limiter reads it: the default and the overrides, merged from the
 * file and the runtime entries by {@link Budgets}. Never changed once made: a change is a new
 * table, published whole, so a loop reads one consistent table per lookup.
 *
 * <p>The counter table keeps fingerprints, not names, so the overrides are also indexed by
 * fingerprint ({@link CounterTable#fingerprint}): open addressing over two arrays, searched
 * without allocating.
 */
public final class PolicyTable {
    private final Policy defaultPolicy;
    private final Map<DomainKey, Policy> overrides;
    private final long[] fingerprints;
    private final Policy[] byFingerprint;
    private final int mask;

    public PolicyTable(Policy defaultPolicy, Map<DomainKey, Policy> overrides) {
        this.defaultPolicy = defaultPolicy;
        // A HashMap, which calls equals on the key looked up: a DomainProbe equals a key with its bytes.
        this.overrides = Collections.unmodifiableMap(new HashMap<>(overrides));
        int size = Integer.highestOneBit(Math.max(1, overrides.size()) * 2 - 1) << 1;
        this.fingerprints = new long[size];
        this.byFingerprint = new Policy[size];
        this.mask = size - 1;
        for (Map.Entry<DomainKey, Policy> e : this.overrides.entrySet()) {
            long fp = CounterTable.fingerprint(DomainProbe.of(e.getKey().name()).hash64());
            int i = (int) (fp >>> 3) & mask;
            while (fingerprints[i] != 0) {
                i = (i + 1) & mask;
            }
            fingerprints[i] = fp;
            byFingerprint[i] = e.getValue();
        }
    }

    public Policy defaultPolicy() {
        return defaultPolicy;
    }

    public Map<DomainKey, Policy> overrides() {
        return overrides;
    }

    /** The budget of {@code domain} (a {@link DomainKey} or a {@code DomainProbe}): its override, or the default. */
    public Policy of(Object domain) {
        return overrides.getOrDefault(domain, defaultPolicy);
    }

    /** The override of the domain with fingerprint {@code fp}, or null. */
    Policy override(long fp) {
        int i = (int) (fp >>> 3) & mask;
        long f;
        while ((f = fingerprints[i]) != 0) {
            if (f == fp) {
                return byFingerprint[i];
            }
            i = (i + 1) & mask;
        }
        return null;
    }

    /** True when no domain can be limited. */
    boolean unlimited() {
        return defaultPolicy == Policy.UNLIMITED && overrides.values().stream().allMatch(p -> p == Policy.UNLIMITED);
    }
}
