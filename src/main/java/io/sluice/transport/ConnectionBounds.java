package io.sluice.transport;

import java.util.concurrent.TimeUnit;

/**
 * The bounds every client connection has, over TCP, TLS and HTTPS alike: closed after
 * {@code idleNanos} with nothing read or written, and wound down (its exchanges answered, then
 * closed) after {@code maxQueries} queries (0: none) or {@code maxDurationNanos} open. One
 * instance, shared by every connection of the listeners.
 */
public record ConnectionBounds(long idleNanos, int maxQueries, long maxDurationNanos) {
    /** How often a connection looks at its clock: a quarter of the shorter bound, at least 10 ms. */
    public long checkNanos() {
        return Math.max(TimeUnit.MILLISECONDS.toNanos(10), Math.min(idleNanos, maxDurationNanos) / 4);
    }
}
