package io.sluice.coalesce;

import io.netty.channel.EventLoop;
import io.sluice.config.Settings;
import io.sluice.metrics.Registry;
import io.sluice.pipeline.Module;
import io.sluice.pipeline.Stage;
import java.util.concurrent.atomic.LongAdder;

/**
 * One upstream query for many identical ones ({@code coalesce}), as a module: a stage on every
 * loop after the limits, so that a query joins another only once its own budget allowed it
 * ({@link CoalesceStage}).
 */
public final class Coalescing implements Module {
    private final int maxWaiters;
    private final int maxUdpSize;
    private final LongAdder coalesced;

    public Coalescing(Settings settings, Registry meters) {
        this.maxWaiters = CoalesceSettings.maxWaiters(settings);
        this.maxUdpSize = settings.maxUdpSize();
        this.coalesced = meters.counter("coalesced",
                "Queries not sent upstream because they joined an identical one waiting on an upstream (coalesce):"
                        + " answered with its answer.");
    }

    /** Its stage on {@code loop}; none while coalescing is off. */
    @Override
    public Stage stage(EventLoop loop) {
        return maxWaiters == 0 ? null : new CoalesceStage(maxWaiters, maxUdpSize, coalesced);
    }
}
