package io.sluice.acl;

import io.sluice.config.Network;
import io.sluice.pipeline.Outcome;
import io.sluice.pipeline.Query;
import io.sluice.pipeline.Stage;
import io.sluice.wire.Wire;
import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * The client rules stage: a query from outside {@code allow-clients} is answered REFUSED (or
 * dropped, {@code acl-action: drop}) and goes no further: never forwarded, never counted against a
 * domain. One per event loop; what it denies is counted ({@code acl_denied}) and the latest
 * denied source is left for {@link DeniedLog} to write, off the loop.
 */
public final class AccessControl implements Stage {
    private final Network[] allowed;
    private final boolean drop;
    private final LongAdder denied;
    private final DeniedLog.Slot latest;

    public AccessControl(List<Network> allowed, boolean drop, LongAdder denied, DeniedLog log) {
        this.allowed = allowed.toArray(new Network[0]);
        this.drop = drop;
        this.denied = denied;
        this.latest = log.slot();
    }

    @Override
    public Outcome handle(Query q) {
        InetAddress client = q.clientIp();
        for (Network n : allowed) {
            if (n.contains(client)) {
                return Outcome.CONTINUE;
            }
        }
        denied.increment();
        latest.set(client);
        if (drop) {
            return Outcome.DROPPED;
        }
        q.answerWithQuestion(Wire.FLAG_RA, Wire.RCODE_REFUSED, 0, null);
        return Outcome.ANSWERED;
    }
}
