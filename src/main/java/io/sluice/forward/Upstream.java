package io.sluice.forward;

import io.sluice.config.UpstreamAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One upstream resolver and its health, shared by all event loops.
 *
 * <p>Event loops only count: a failed attempt adds one (a timeout unless the loop had an answer
 * from this upstream after that query left, or an ICMP port unreachable), an answer resets to
 * zero. The {@code maxFails}-th failure in a row marks it down; from then on only
 * {@link UpstreamPool}'s prober marks it up.
 */
public final class Upstream {
    private final int index;
    private final UpstreamAddress address;
    private final int maxFails;
    private final AtomicInteger consecutiveFailures = new AtomicInteger();
    private final AtomicBoolean down = new AtomicBoolean();
    /** The smoothed round-trip time last published by a loop, in nanoseconds; -1 before any. */
    private volatile long rttNanos = -1;

    /** It is sent the queries' Client Subnet (ecs.upstreams): else they go to it without. */
    private final boolean sentClientSubnet;

    Upstream(int index, UpstreamAddress address, int maxFails, boolean sentClientSubnet) {
        this.index = index;
        this.address = address;
        this.maxFails = maxFails;
        this.sentClientSubnet = sentClientSubnet;
    }

    boolean sentClientSubnet() {
        return sentClientSubnet;
    }

    public InetSocketAddress address() {
        return address.address();
    }

    /** Asked over TLS, every query on one connection per loop, whatever the client came over. */
    public boolean overTls() {
        return address.overTls();
    }

    /** The name a TLS upstream's certificate must hold; null for a plain one. */
    String tlsName() {
        return address.tlsName();
    }

    int index() {
        return index;
    }

    public boolean isDown() {
        return down.get();
    }

    void recordAnswer() {
        // Read before write: answers are the common case, and a plain read keeps the line shared.
        if (consecutiveFailures.get() != 0) {
            consecutiveFailures.set(0);
        }
    }

    /** Counts a failed attempt; true when this one marked the upstream down. */
    boolean recordFailure() {
        return consecutiveFailures.incrementAndGet() >= maxFails && down.compareAndSet(false, true);
    }

    /**
     * A loop's smoothed RTT to this upstream ({@link RttEstimates}), published once a tick, never per
     * reply, so that the loops do not pass this line between them per query.
     */
    void publishRtt(long nanos) {
        if (nanos >= 0 && nanos != rttNanos) {
            rttNanos = nanos;
        }
    }

    /** The smoothed round-trip time to this upstream in nanoseconds, as a loop last published it; -1 before any reply. */
    public long rttNanos() {
        return rttNanos;
    }

    void markUp() {
        consecutiveFailures.set(0);
        down.set(false);
    }

    @Override
    public String toString() {
        return address.toString();
    }
}
