package io.sluice.pipeline;

import io.sluice.metrics.Registry;
import io.sluice.transport.Transport;
import io.sluice.wire.Answers;
import io.sluice.wire.Wire;
import java.util.concurrent.atomic.LongAdder;

/**
 * The first stage: reads the header and question in place and answers what is not a query sluice
 * passes on. FORMERR or NOTIMP when an ID can be read (with an OPT record when the query had one),
 * otherwise nothing; each is counted. A well-formed query goes on.
 */
public final class MessageCheck implements Stage {
    private final LongAdder formerr;
    private final LongAdder notimp;
    private final LongAdder droppedNoId;
    private final LongAdder droppedResponses;

    public MessageCheck(Registry metrics) {
        formerr = metrics.counter("formerr", "Malformed queries answered FORMERR.");
        notimp = metrics.counter("notimp", "Queries of an opcode other than QUERY, answered NOTIMP.");
        droppedNoId = metrics.counter("dropped_no_id", "Messages too short to carry an ID, dropped.");
        droppedResponses = metrics.counter("dropped_responses", "Messages with QR=1 sent to the listener, dropped.");
    }

    @Override
    public Outcome handle(Query q) {
        switch (q.view().read(q.message())) {
            case QUERY -> {
                return Outcome.CONTINUE;
            }
            case FORMERR -> {
                formerr.increment();
                q.answer(Answers.headerOnly(Transport.ALLOCATOR, q.message(), q.view(), Wire.RCODE_FORMERR));
                return Outcome.ANSWERED;
            }
            case NOTIMP -> {
                notimp.increment();
                q.answer(q.view().hasQuestion() // its question echoed, as Unbound's
                        ? Answers.withQuestion(Transport.ALLOCATOR, q.message(), q.view(), 0, Wire.RCODE_NOTIMP, 0, null)
                        : Answers.headerOnly(Transport.ALLOCATOR, q.message(), q.view(), Wire.RCODE_NOTIMP));
                return Outcome.ANSWERED;
            }
            case DROP_NO_ID -> droppedNoId.increment();
            case DROP_RESPONSE -> droppedResponses.increment();
        }
        return Outcome.NOT_A_QUERY;
    }
}
