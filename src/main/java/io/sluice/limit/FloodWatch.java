package io.sluice.limit;

import io.netty.buffer.ByteBuf;
import io.sluice.domain.DomainProbe;
import io.sluice.pipeline.UpstreamReplies;
import io.sluice.wire.QueryView;
import io.sluice.wire.Wire;
import java.util.concurrent.atomic.LongAdder;

/**
 * One loop's feed of {@link Floods}: each answer an upstream gives (a cache miss, with the cache
 * on) is counted against its domain's counter, NXDOMAIN or not. A domain without a counter (no
 * budget, or past the table's bound) is not watched. The name is reduced again here rather than
 * carried from the limit stage, so that forwarding carries nothing of limits.
 */
public final class FloodWatch implements UpstreamReplies {
    private final Limits limits;
    private final Floods floods;
    private final LongAdder detected;
    private final DomainProbe domain = new DomainProbe();

    public FloodWatch(Limits limits, LimitMeters meters) {
        this.limits = limits;
        this.floods = limits.limiter().floods();
        this.detected = meters.floodsDetected;
    }

    @Override
    public void answered(ByteBuf query, QueryView view, ByteBuf reply) {
        DomainLimiter limiter = limits.limiter();
        if (!limiter.counting() || !view.hasQuestion()) {
            return;
        }
        limits.domains().reduce(query, view.nameStart(), view.nameEnd(), domain);
        int slot = limiter.existing(domain);
        if (slot != DomainLimiter.NONE && floods.answered(limiter, slot, domain, Wire.rcode(reply) == Wire.RCODE_NXDOMAIN)
                == Floods.Change.ENTERED) {
            detected.increment();
        }
    }
}
