package io.sluice.forward;

import io.netty.buffer.ByteBuf;
import io.sluice.wire.QueryEdns;
import io.sluice.wire.QueryView;

/**
 * {@code max-udp-size} on the queries a loop sends upstream for UDP clients: the payload size a
 * query's OPT offers is lowered to it in the copy sent, so that the upstream fits its answer to it
 * (leaving records out where it may) rather than sluice cutting it to TC, and so that every client
 * of that size or more asks the same, and one cached answer serves them. Confined to its loop.
 */
final class UdpPayloadCap {
    private final int maxUdpSize;
    private final QueryEdns edns = new QueryEdns();

    UdpPayloadCap(int maxUdpSize) {
        this.maxUdpSize = maxUdpSize;
    }

    /**
     * The most a UDP answer to the query {@code view} read from {@code query} may carry: the payload
     * size its OPT offers (512 without one), at most {@code max-udp-size}, which {@code copy} (the
     * query as sent upstream, starting at index 0) is made to offer. A query malformed past its
     * question is taken as without EDNS.
     */
    int apply(ByteBuf copy, ByteBuf query, QueryView view) {
        edns.read(query, view);
        if (edns.udpPayload() > maxUdpSize) {
            copy.setShort(edns.payloadAt() - view.base(), maxUdpSize);
            return maxUdpSize;
        }
        return edns.udpPayload();
    }
}
