package io.sluice.limit;

import io.sluice.domain.DomainKey;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;

/**
 * Every domain's budget as the limiter reads it: the default and the overrides, merged from the
 * file and the runtime entries by {@link Budgets}. Never changed once made: a change is a new
 * table, published whole, so a loop reads one consistent table per lookup.
 */
public record PolicyTable(Policy defaultPolicy, Map<DomainKey, Policy> overrides) {
    public PolicyTable {
        // A HashMap, which calls equals on the key looked up: a DomainProbe equals a key with its bytes.
        overrides = Collections.unmodifiableMap(new HashMap<>(overrides));
    }

    /** The budget of {@code domain} (a {@link DomainKey} or a {@code DomainProbe}): its override, or the default. */
    public Policy of(Object domain) {
        return overrides.getOrDefault(domain, defaultPolicy);
    }

    /** True when no domain can be limited. */
    boolean unlimited() {
        return defaultPolicy == Policy.UNLIMITED && overrides.values().stream().allMatch(p -> p == Policy.UNLIMITED);
    }
}
