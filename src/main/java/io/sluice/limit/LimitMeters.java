package io.sluice.limit;

import io.sluice.config.LimitSettings;
import io.sluice.metrics.Registry;
import java.util.concurrent.atomic.LongAdder;

/** What limiting counts, exported whether or not anything is limited (then they stay 0). */
public final class LimitMeters {
    /** By action, in {@link LimitSettings.Action} order. */
    final LongAdder[] limited = new LongAdder[LimitSettings.Action.values().length];
    final LongAdder limitedDryRun;
    final LongAdder limitedPerClient;
    /** Refusals in {@code limited} by whether their client proved its address: unverified first, then verified. */
    final LongAdder[] limitedByProof = new LongAdder[2];
    final LongAdder limitedPrefetches;
    final LongAdder inflightCapped;
    private final LongAdder floodsDetected;

    public LimitMeters(Registry r) {
        for (LimitSettings.Action a : LimitSettings.Action.values()) {
            limited[a.ordinal()] = r.counter("limited", "Queries over their domain's limit, by the action that answered them.",
                    "action", a.toString());
        }
        limitedDryRun = r.counter("limited_dry_run", "Queries over their limit that the dry run forwarded.");
        limitedPerClient = r.counter("limited_per_client",
                "Queries over their client network's budget for the domain (also counted in limited, or dry run).");
        for (int verified = 0; verified < 2; verified++) {
            limitedByProof[verified] = r.counter("limited_verified", "Queries over a limit (counted in limited), by"
                    + " whether their client proved its address: a valid server cookie, or TCP, DoT, DoH.",
                    "verified", String.valueOf(verified == 1));
        }
        limitedPrefetches = r.counter("limited_prefetches",
                "Cache prefetches over a budget: not sent upstream, and not in limited (no client was refused).");
        inflightCapped = r.counter("inflight_capped",
                "Queries not sent because their domain had limits.max-inflight-per-domain waiting on upstreams:"
                        + " answered at once, stale from the cache or SERVFAIL (EDE 22).");
        floodsDetected = r.counter("floods_detected",
                "Times a domain's upstream answers were mostly NXDOMAIN and its budget was cut (limits.flood).");
    }

    /** Floods detected: counted by {@code flood.FloodWatch}, exported with the rest even while detection is off. */
    public LongAdder floodsDetected() {
        return floodsDetected;
    }
}
