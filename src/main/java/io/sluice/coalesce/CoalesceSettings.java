package io.sluice.coalesce;

import io.sluice.config.Setting;
import io.sluice.config.Setting.Applied;
import io.sluice.config.SettingSection;
import io.sluice.config.Settings;
import io.sluice.config.Values;
import java.util.List;

/** Coalescing's settings: read at start. */
public final class CoalesceSettings implements SettingSection {
    public static final Setting<Boolean> COALESCE = Setting.one("coalesce", null, null, "true", true,
            Values::bool, Applied.RESTART,
            "A query identical to one waiting on an upstream (as the cache keys answers) waits for that one's answer"
                    + " instead of being sent; each gets its own copy (Unbound's mesh, BIND's clients-per-query).");
    public static final Setting<Integer> COALESCE_MAX_WAITERS = Setting.one("coalesce-max-waiters", null, null, "100",
            100, v -> Values.integer(v, 1, 100_000), Applied.RESTART,
            "Queries that may wait on one upstream query; past it, a query is asked on its own and the ones after it"
                    + " wait on it.");

    @Override
    public List<Setting<?>> settings() {
        return List.of(COALESCE, COALESCE_MAX_WAITERS);
    }

    /** How many may join one query in {@code settings}: 0 when coalescing is off. */
    static int maxWaiters(Settings settings) {
        return settings.value(COALESCE) ? settings.value(COALESCE_MAX_WAITERS) : 0;
    }
}
