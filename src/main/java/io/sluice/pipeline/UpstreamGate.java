package io.sluice.pipeline;

/**
 * What holds each registrable domain to a number of queries waiting on upstreams at once
 * ({@code limits.max-inflight-per-domain}): asked by the forwarder before it sends a query, told
 * when that query stops waiting. The query's domain comes as the keyed hash the limits put on it
 * ({@link Query#domainHash}); 0 means no bound applies to it. Shared by every loop.
 */
public interface UpstreamGate {
    /** The query is not counted: no bound applies to it, or there was no room to count it. */
    int NOT_COUNTED = -1;
    /** The query may not be sent: its domain has as many waiting as it may. */
    int CLOSED = -2;

    /**
     * Counts a query of the domain {@code domainHash} as waiting, when its domain has room.
     *
     * @return a ticket to hand to {@link #leave} when it stops waiting ({@link #NOT_COUNTED} among
     *         them), or {@link #CLOSED} when it may not be sent
     */
    int enter(long domainHash);

    /** The query with {@code ticket} from {@link #enter} waits no longer. */
    void leave(int ticket);
}
