package io.sluice.metrics;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Every counter sluice keeps, in one place. {@link LongAdder} cells keep event loops from
 * contending on one cache line; reading a total is the rare operation.
 */
public final class Meters {
    public final LongAdder queriesUdp = new LongAdder();
    public final LongAdder queriesTcp = new LongAdder();
    /** A datagram or frame too short to carry a message ID. */
    public final LongAdder droppedNoId = new LongAdder();
    /** A message with QR=1 sent to the listener. */
    public final LongAdder droppedResponses = new LongAdder();
    public final LongAdder formerr = new LongAdder();
    public final LongAdder notimp = new LongAdder();
    /** Queries sent to a first upstream. */
    public final LongAdder forwarded = new LongAdder();
    /** Upstream replies relayed to clients. */
    public final LongAdder answered = new LongAdder();
    /** SERVFAIL written by sluice: no upstream answered, or the in-flight bound was reached. */
    public final LongAdder servfail = new LongAdder();
    public final LongAdder inflightFull = new LongAdder();
    public final LongAdder upstreamTimeouts = new LongAdder();
    /** A reply whose ID matches nothing in flight: late, duplicated or forged. */
    public final LongAdder repliesUnexpected = new LongAdder();
    /** A reply with a pending ID but the wrong source or question: forged or broken. */
    public final LongAdder repliesMismatched = new LongAdder();
    /** Queries over their domain's limit, answered by the configured action instead of forwarded. */
    public final LongAdder limited = new LongAdder();
    /** Queries over their limit that dry-run forwarded anyway. */
    public final LongAdder limitedDryRun = new LongAdder();
    /** Zone transfers cut off because the upstream stopped or closed part-way. */
    public final LongAdder transfersAborted = new LongAdder();
    public final LongAdder tcpConnectionsRejected = new LongAdder();
    public final LongAdder tcpIdleClosed = new LongAdder();
    /** Write failures and other I/O errors on sockets, not logged one by one. */
    public final LongAdder ioErrors = new LongAdder();

    /** A snapshot by name, in a stable order, for logs and tests. */
    public Map<String, Long> snapshot() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("queries_udp", queriesUdp.sum());
        m.put("queries_tcp", queriesTcp.sum());
        m.put("forwarded", forwarded.sum());
        m.put("answered", answered.sum());
        m.put("servfail", servfail.sum());
        m.put("limited", limited.sum());
        m.put("limited_dry_run", limitedDryRun.sum());
        m.put("inflight_full", inflightFull.sum());
        m.put("upstream_timeouts", upstreamTimeouts.sum());
        m.put("formerr", formerr.sum());
        m.put("notimp", notimp.sum());
        m.put("dropped_no_id", droppedNoId.sum());
        m.put("dropped_responses", droppedResponses.sum());
        m.put("replies_unexpected", repliesUnexpected.sum());
        m.put("replies_mismatched", repliesMismatched.sum());
        m.put("transfers_aborted", transfersAborted.sum());
        m.put("tcp_connections_rejected", tcpConnectionsRejected.sum());
        m.put("tcp_idle_closed", tcpIdleClosed.sum());
        m.put("io_errors", ioErrors.sum());
        return m;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        snapshot().forEach((k, v) -> sb.append(sb.length() == 0 ? "" : " ").append(k).append('=').append(v));
        return sb.toString();
    }
}
