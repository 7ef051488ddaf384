package io.sluice.pipeline;

import io.sluice.metrics.Meters;
import io.sluice.wire.Answers;
import io.sluice.wire.Wire;

/**
 * The first stage: reads the header and question in place and answers what is not a query sluice
 * passes on. FORMERR or NOTIMP when an ID can be read (with an OPT record when the query had one),
 * otherwise nothing; each is counted. A well-formed query goes on.
 */
public final class MessageCheck implements Stage {
    private final Meters meters;

    public MessageCheck(Meters meters) {
        this.meters = meters;
    }

    @Override
    public Outcome handle(Query q) {
        switch (q.view().read(q.message())) {
            case QUERY -> {
                return Outcome.CONTINUE;
            }
            case FORMERR -> {
                meters.formerr.increment();
                q.answer(Answers.headerOnly(q.client().alloc(), q.message(), q.view(), Wire.RCODE_FORMERR));
                return Outcome.ANSWERED;
            }
            case NOTIMP -> {
                meters.notimp.increment();
                q.answer(Answers.headerOnly(q.client().alloc(), q.message(), q.view(), Wire.RCODE_NOTIMP));
                return Outcome.ANSWERED;
            }
            case DROP_NO_ID -> meters.droppedNoId.increment();
            case DROP_RESPONSE -> meters.droppedResponses.increment();
        }
        return Outcome.NOT_A_QUERY;
    }
}
