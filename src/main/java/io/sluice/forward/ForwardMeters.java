package io.sluice.forward;

import io.sluice.config.UpstreamAddress;
import io.sluice.metrics.LatencyHistogram;
import io.sluice.metrics.Registry;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/** What forwarding counts, shared by every loop's {@link Forwarder}. */
public final class ForwardMeters {
    final LongAdder forwarded;
    final LongAdder answered;
    final LongAdder servfail;
    final LongAdder inflightFull;
    final LongAdder repliesUnexpected;
    final LongAdder repliesMismatched;
    final LongAdder transfersAborted;
    final LongAdder ioErrors;
    final LongAdder caseMismatched;
    final LongAdder caseFallbacks;
    final LongAdder retransmits;
    /** By upstream index: replies from it that were not accepted, for whatever reason. */
    final LongAdder[] repliesRejected;
    /** By upstream index: attempts that got no answer in time. */
    final LongAdder[] upstreamTimeouts;
    /** By upstream index: attempts the upstream's host refused (ICMP port unreachable: nothing listens). */
    final LongAdder[] upstreamRefused;
    /** By upstream index: TLS connections to it that failed before their handshake ended. */
    final LongAdder[] tlsFailures;
    /** By upstream index: from an attempt's sending to its accepted reply. */
    final LatencyHistogram[] latency;

    /** The latency of upstream {@code index}'s replies. */
    public LatencyHistogram latency(int index) {
        return latency[index];
    }

    public ForwardMeters(Registry r, List<UpstreamAddress> upstreams) {
        forwarded = r.counter("forwarded", "Queries sent to a first upstream.");
        answered = r.counter("answered", "Upstream replies relayed to clients.");
        servfail = r.counter("servfail", "SERVFAIL written by sluice: no upstream answered, or the in-flight bound.");
        inflightFull = r.counter("inflight_full",
                "Queries not forwarded because max-inflight were waiting: answered at once, stale from the cache or SERVFAIL.");
        repliesUnexpected = r.counter("replies_unexpected", "Replies whose ID nothing waits for: late, duplicated or forged.");
        repliesMismatched = r.counter("replies_mismatched", "Replies with a waiting ID but the wrong sender or"
                + " question, or a Client Subnet other than the query's (RFC 7871 section 7.3).");
        transfersAborted = r.counter("transfers_aborted", "Zone transfers given up part-way.");
        ioErrors = r.ioErrors();
        caseMismatched = r.counter("replies_case_mismatched",
                "Replies with a waiting ID and question but not the letter case sent (randomize-case): forged, or an upstream that does not keep case.");
        caseFallbacks = r.counter("case_fallbacks",
                "Times an event loop stopped randomising the case of names for an upstream that was seen not to keep it.");
        retransmits = r.counter("retransmits",
                "UDP queries asked upstream again after their retransmit timeout passed unanswered (retransmit).");
        repliesRejected = new LongAdder[upstreams.size()];
        upstreamTimeouts = new LongAdder[upstreams.size()];
        upstreamRefused = new LongAdder[upstreams.size()];
        tlsFailures = new LongAdder[upstreams.size()];
        latency = new LatencyHistogram[upstreams.size()];
        for (int i = 0; i < repliesRejected.length; i++) {
            String u = upstreams.get(i).toString();
            repliesRejected[i] = r.counter("replies_rejected",
                    "Replies from an upstream not relayed: an ID nothing waits for, or a wrong sender, question, case"
                            + " or Client Subnet.",
                    "upstream", u);
            upstreamTimeouts[i] = r.counter("upstream_timeouts",
                    "Attempts that got no answer within their timeout (with retransmit, their retransmit timeout).",
                    "upstream", u);
            upstreamRefused[i] = r.counter("upstream_unreachable",
                    "Attempts the upstream's host answered with ICMP port unreachable (nothing listens): moved on at once.",
                    "upstream", u);
            tlsFailures[i] = r.counter("upstream_tls_failures",
                    "Connections to a tls:// upstream that failed before their handshake ended: certificate, name, timeout.",
                    "upstream", u);
            latency[i] = r.histogram("upstream_latency", "From sending a query upstream to its reply.", "upstream", u);
        }
    }
}
