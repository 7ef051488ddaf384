package io.sluice.forward;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * One loop's round-trip times to each upstream and the retransmit timeout they give: RFC 6298's
 * estimator (a smoothed RTT with gain 1/8, its mean deviation with gain 1/4, the timeout the first
 * plus four times the second), as Unbound keeps per server in its infra cache. Its samples are
 * UDP round trips, each unambiguous, as each attempt leaves under an ID of its own, so Karn's rule
 * has nothing to drop. Confined to its loop.
 */
final class RttEstimates {
    /** The least an attempt waits before it is sent again. */
    static final long MIN_RTO_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /** The wait before any reply came from an upstream: Unbound's for a server it has not heard from. */
    static final long INITIAL_RTO_NANOS = TimeUnit.MILLISECONDS.toNanos(376);
    /**
     * Losses in a row past which the wait doubles no more: at most eight times the retransmit
     * timeout (and never past the attempt's timeout), so that a query keeps being asked through a
     * lossy link or a short outage until query-timeout, rather than once more after seconds
     * (docs/benchmarks.md, "Network faults").
     */
    private static final int MAX_BACKOFF_SHIFT = 3;
    private static final long NONE = -1;

    private final long maxRtoNanos;
    private final long[] smoothed;
    private final long[] deviation;

    /** @param maxRtoNanos the most an attempt waits: the upstream timeout */
    RttEstimates(int upstreams, long maxRtoNanos) {
        this.maxRtoNanos = maxRtoNanos;
        this.smoothed = new long[upstreams];
        this.deviation = new long[upstreams];
        Arrays.fill(smoothed, NONE);
    }

    /** A reply from upstream {@code i} came {@code rttNanos} after its attempt left. */
    void sample(int i, long rttNanos) {
        long r = Math.max(0, rttNanos);
        if (smoothed[i] == NONE) {
            smoothed[i] = r;
            deviation[i] = r / 2;
        } else {
            deviation[i] += (Math.abs(smoothed[i] - r) - deviation[i]) / 4;
            smoothed[i] += (r - smoothed[i]) / 8;
        }
    }

    /**
     * How long an attempt to upstream {@code i} waits before it is sent again, after
     * {@code losses} attempts of the same query in a row went unanswered: doubled for each, up to
     * eight times.
     */
    long timeout(int i, int losses) {
        long base = smoothed[i] == NONE ? INITIAL_RTO_NANOS : smoothed[i] + 4 * deviation[i];
        long rto = Math.max(MIN_RTO_NANOS, Math.min(maxRtoNanos, base));
        return Math.min(maxRtoNanos, rto << Math.min(losses, MAX_BACKOFF_SHIFT));
    }

    /** The smoothed RTT to upstream {@code i} in nanoseconds, or -1 before its first reply. */
    long smoothed(int i) {
        return smoothed[i];
    }
}
