package io.sluice.forward;

import io.sluice.metrics.Registry;
import java.util.concurrent.atomic.LongAdder;

/** What forwarding counts, shared by every loop's {@link Forwarder}. */
public final class ForwardMeters {
    final LongAdder forwarded;
    final LongAdder answered;
    final LongAdder servfail;
    final LongAdder inflightFull;
    final LongAdder upstreamTimeouts;
    final LongAdder repliesUnexpected;
    final LongAdder repliesMismatched;
    final LongAdder transfersAborted;
    final LongAdder ioErrors;

    public ForwardMeters(Registry r) {
        forwarded = r.counter("forwarded", "Queries sent to a first upstream.");
        answered = r.counter("answered", "Upstream replies relayed to clients.");
        servfail = r.counter("servfail", "SERVFAIL written by sluice: no upstream answered, or the in-flight bound.");
        inflightFull = r.counter("inflight_full", "Queries refused at once because max-inflight were waiting.");
        upstreamTimeouts = r.counter("upstream_timeouts", "Attempts that got no answer within their timeout.");
        repliesUnexpected = r.counter("replies_unexpected", "Replies whose ID nothing waits for: late, duplicated or forged.");
        repliesMismatched = r.counter("replies_mismatched", "Replies with a waiting ID but the wrong sender or question.");
        transfersAborted = r.counter("transfers_aborted", "Zone transfers given up part-way.");
        ioErrors = r.counter("io_errors", "Write failures and other socket errors, not logged one by one.");
    }
}
