package io.sluice.acl;

import io.sluice.pipeline.Outcome;
import io.sluice.pipeline.Query;
import io.sluice.pipeline.Stage;
import io.sluice.wire.QueryView;
import io.sluice.wire.Wire;
import java.net.InetAddress;
import java.util.concurrent.atomic.LongAdder;

/**
 * The client rules stage, the first: a query from outside {@code allow-clients} is answered
 * REFUSED (or dropped, {@code acl-action: drop}) and goes no further: never forwarded, never
 * counted against a domain, and never answered anything else (a malformed one from outside gets
 * no FORMERR: it is dropped). One per event loop; what it denies is counted ({@code acl_denied})
 * and the latest denied source is left for {@link DeniedLog} to write, off the loop.
 */
public final class AccessControl implements Stage {
    private final ClientRules rules;
    private final LongAdder denied;
    private final DeniedLog.Slot latest;

    public AccessControl(ClientRules rules, LongAdder denied, DeniedLog log) {
        this.rules = rules;
        this.denied = denied;
        this.latest = log.slot();
    }

    @Override
    public Outcome handle(Query q) {
        InetAddress client = q.clientIp();
        ClientRules.Rules r = rules.now();
        if (r.allows(client)) {
            return Outcome.CONTINUE;
        }
        denied.increment();
        latest.set(client);
        if (r.drop() || q.view().read(q.message()) != QueryView.Check.QUERY) {
            return Outcome.DROPPED;
        }
        q.answerWithQuestion(Wire.FLAG_RA, Wire.RCODE_REFUSED, 0, null);
        return Outcome.ANSWERED;
    }
}
