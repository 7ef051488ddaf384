package io.sluice.limit;

import io.sluice.metrics.Registry;
import java.util.concurrent.atomic.LongAdder;

/** What limiting counts, exported whether or not anything is limited (then they stay 0). */
public final class LimitMeters {
    final LongAdder limited;
    final LongAdder limitedDryRun;

    public LimitMeters(Registry r) {
        limited = r.counter("limited", "Queries over their domain's limit, answered by the action.");
        limitedDryRun = r.counter("limited_dry_run", "Queries over their limit that the dry run forwarded.");
    }
}
