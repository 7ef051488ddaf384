package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.sluice.domain.DomainProbe;
import io.sluice.forward.Forwarder;
import io.sluice.limit.Counter;
import io.sluice.limit.Limits;
import io.sluice.metrics.Meters;
import io.sluice.wire.Answers;
import io.sluice.wire.QueryView;
import io.sluice.wire.Wire;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * The one place that sees every stage of a query: check it, reduce its name to the registrable
 * domain, count it against that domain's budget, then forward it or answer for the limit. One per
 * event loop, shared by the UDP socket and the TCP connections of that loop.
 */
final class QueryHandler {
    private final QueryView view = new QueryView();
    private final DomainProbe domain = new DomainProbe();
    private final Forwarder forwarder;
    private final Limits limits;
    private final Meters meters;

    QueryHandler(Forwarder forwarder, Limits limits, Meters meters) {
        this.forwarder = forwarder;
        this.limits = limits;
        this.meters = meters;
    }

    /**
     * Handles one message from a client; the caller keeps and releases {@code message}.
     *
     * @param clientAddress the UDP sender, or null when {@code client} is a TCP connection
     */
    void handle(ByteBuf message, Channel client, InetSocketAddress clientAddress) {
        switch (view.read(message)) {
            case QUERY -> {
                if (limits.active() && !exempt(client, clientAddress) && overLimit(message, client, clientAddress)) {
                    return;
                }
                forwarder.forward(message, view, client, clientAddress);
            }
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

    private boolean exempt(Channel client, InetSocketAddress clientAddress) {
        if (!limits.hasExemptions()) {
            return false;
        }
        InetSocketAddress from = clientAddress != null ? clientAddress : (InetSocketAddress) client.remoteAddress();
        InetAddress address = from.getAddress();
        return limits.exempt(address);
    }

    /** Counts the query; when it is over its domain's budget, acts and returns true. */
    private boolean overLimit(ByteBuf message, Channel client, InetSocketAddress clientAddress) {
        limits.domains().reduce(message, view.nameStart(), domain);
        Counter over = limits.limiter().refusedBy(domain);
        if (over == null) {
            return false;
        }
        if (limits.dryRun()) {
            meters.limitedDryRun.increment();
            return false;
        }
        meters.limited.increment();
        int rcode;
        int flags = Wire.FLAG_RA;
        switch (limits.action()) {
            case DROP -> {
                return true;
            }
            case NXDOMAIN -> rcode = Wire.RCODE_NXDOMAIN;
            case TRUNCATE -> {
                // TC invites the client to retry over TCP, proving its address; over TCP there is
                // nothing left to invite, so it is refused.
                boolean udp = clientAddress != null;
                rcode = udp ? Wire.RCODE_NOERROR : Wire.RCODE_REFUSED;
                flags |= udp ? Wire.FLAG_TC : 0;
            }
            default -> rcode = Wire.RCODE_REFUSED;
        }
        forwarder.answer(client, clientAddress, Answers.withQuestion(client.alloc(), message, view, flags, rcode,
                Answers.EDE_OTHER, over.refusalText()));
        return true;
    }

    void flush() {
        forwarder.flush();
    }

    Meters meters() {
        return meters;
    }
}
