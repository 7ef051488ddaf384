package io.sluice.forward;

import io.sluice.pipeline.Outcome;
import io.sluice.pipeline.Query;
import io.sluice.pipeline.Stage;

/** The last stage: the query goes to its loop's {@link Forwarder}, which answers it in all cases. */
public final class ForwardStage implements Stage {
    private final Forwarder forwarder;

    public ForwardStage(Forwarder forwarder) {
        this.forwarder = forwarder;
    }

    @Override
    public Outcome handle(Query q) {
        forwarder.forward(q.message(), q.view(), q.client(), q.udpAddress());
        return Outcome.ANSWERED;
    }
}
