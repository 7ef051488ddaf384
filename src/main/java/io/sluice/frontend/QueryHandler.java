package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.sluice.forward.Forwarder;
import io.sluice.metrics.Meters;
import io.sluice.wire.Answers;
import io.sluice.wire.QueryView;
import io.sluice.wire.Wire;
import java.net.InetSocketAddress;

/**
 * The one place that sees every stage of a query: check it, then forward it. One per event loop,
 * shared by the UDP socket and the TCP connections of that loop.
 */
final class QueryHandler {
    private final QueryView view = new QueryView();
    private final Forwarder forwarder;
    private final Meters meters;

    QueryHandler(Forwarder forwarder, Meters meters) {
        this.forwarder = forwarder;
        this.meters = meters;
    }

    /**
     * Handles one message from a client; the caller keeps and releases {@code message}.
     *
     * @param clientAddress the UDP sender, or null when {@code client} is a TCP connection
     */
    void handle(ByteBuf message, Channel client, InetSocketAddress clientAddress) {
        switch (view.read(message)) {
            case QUERY -> forwarder.forward(message, view, client, clientAddress);
            case FORMERR -> {
                meters.formerr.increment();
                forwarder.answer(client, clientAddress,
                        Answers.headerOnly(client.alloc(), view.id(), view.flags(), Wire.RCODE_FORMERR));
            }
            case NOTIMP -> {
                meters.notimp.increment();
                forwarder.answer(client, clientAddress,
                        Answers.headerOnly(client.alloc(), view.id(), view.flags(), Wire.RCODE_NOTIMP));
            }
            case DROP_NO_ID -> meters.droppedNoId.increment();
            case DROP_RESPONSE -> meters.droppedResponses.increment();
        }
    }

    void flush() {
        forwarder.flush();
    }

    Meters meters() {
        return meters;
    }
}
