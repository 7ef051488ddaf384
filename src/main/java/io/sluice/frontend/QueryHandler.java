package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.sluice.backend.redis.ExactDecisions;
import io.sluice.backend.redis.RedisBackend;
import io.sluice.config.LimitSettings;
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
final class QueryHandler implements ExactDecisions.Verdicts {
    private final QueryView view = new QueryView();
    private final DomainProbe domain = new DomainProbe();
    private final Forwarder forwarder;
    private final Limits limits;
    private final Meters meters;
    /** Counters shared through Redis, or null. */
    private final RedisBackend redis;
    /** This loop's Redis exact-mode decisions, or null. */
    private final ExactDecisions exact;

    QueryHandler(Forwarder forwarder, Limits limits, Meters meters, RedisBackend redis) {
        this.forwarder = forwarder;
        this.limits = limits;
        this.meters = meters;
        this.redis = redis;
        this.exact = redis == null ? null : redis.exactDecisions(forwarder.loop(), this);
    }

    /** What became of a message, for a TCP connection to act on. */
    enum Outcome {
        /** Answered, or to be answered once an upstream (or Redis) has. */
        ANSWERED,
        /** No answer will come: over its limit with action drop. */
        DROPPED,
        /** Not a DNS query at all (no ID, or a response): a TCP peer sending it is closed. */
        NOT_A_QUERY
    }

    /**
     * Handles one message from a client; the caller keeps and releases {@code message}.
     *
     * @param clientAddress the UDP sender, or null when {@code client} is a TCP connection
     */
    Outcome handle(ByteBuf message, Channel client, InetSocketAddress clientAddress) {
        switch (view.read(message)) {
            case QUERY -> {
                // A question-less query (asking for a server cookie) names no domain to count: the
                // upstream answers it from the header and OPT alone.
                if (limits.active() && view.hasQuestion() && !exempt(client, clientAddress)) {
                    Outcome limited = overLimit(message, client, clientAddress);
                    if (limited != null) {
                        return limited;
                    }
                }
                forwarder.forward(message, view, client, clientAddress);
                return Outcome.ANSWERED;
            }
            case FORMERR -> {
                meters.formerr.increment();
                forwarder.answer(client, clientAddress,
                        Answers.headerOnly(client.alloc(), message, view, Wire.RCODE_FORMERR));
                return Outcome.ANSWERED;
            }
            case NOTIMP -> {
                meters.notimp.increment();
                forwarder.answer(client, clientAddress,
                        Answers.headerOnly(client.alloc(), message, view, Wire.RCODE_NOTIMP));
                return Outcome.ANSWERED;
            }
            case DROP_NO_ID -> meters.droppedNoId.increment();
            case DROP_RESPONSE -> meters.droppedResponses.increment();
        }
        return Outcome.NOT_A_QUERY;
    }

    private boolean exempt(Channel client, InetSocketAddress clientAddress) {
        if (!limits.hasExemptions()) {
            return false;
        }
        InetSocketAddress from = clientAddress != null ? clientAddress : (InetSocketAddress) client.remoteAddress();
        InetAddress address = from.getAddress();
        return limits.exempt(address);
    }

    /**
     * Counts the query; returns what became of it when it is taken care of here (over its
     * domain's budget and answered or dropped, or parked until Redis decides), or null when it is
     * to be forwarded.
     */
    private Outcome overLimit(ByteBuf message, Channel client, InetSocketAddress clientAddress) {
        limits.domains().reduce(message, view.nameStart(), view.nameEnd(), domain);
        Counter c = limits.limiter().counterFor(domain);
        if (c == null) {
            return null;
        }
        if (redis == null) {
            return limits.limiter().tryAcquire(c) ? null : refused(c, message, client, clientAddress);
        }
        return switch (redis.decide(c, exact, message, client, clientAddress)) {
            case RedisBackend.ALLOWED -> null;
            case RedisBackend.REFUSED -> refused(c, message, client, clientAddress);
            default -> Outcome.ANSWERED; // parked: allow() or refuse() below, once Redis answers
        };
    }

    private Outcome refused(Counter over, ByteBuf message, Channel client, InetSocketAddress clientAddress) {
        if (!refuse(over, message, client, clientAddress)) {
            return null; // dry run: forwarded after all
        }
        return limits.action() == LimitSettings.Action.DROP ? Outcome.DROPPED : Outcome.ANSWERED;
    }

    @Override
    public void allow(ExactDecisions.ParkedQuery q) {
        if (view.read(q.message()) == QueryView.Check.QUERY) {
            forwarder.forward(q.message(), view, q.client(), q.address());
        }
    }

    @Override
    public void refuse(ExactDecisions.ParkedQuery q, Counter over) {
        if (view.read(q.message()) != QueryView.Check.QUERY) {
            return;
        }
        if (!refuse(over, q.message(), q.client(), q.address())) {
            forwarder.forward(q.message(), view, q.client(), q.address());
        } else if (limits.action() == LimitSettings.Action.DROP && q.address() == null) {
            // the TCP connection counted an answer owed when the query was parked
            q.client().pipeline().fireUserEventTriggered(Outcome.DROPPED);
        }
    }

    /**
     * Acts on a query over {@code over}'s budget ({@link #view} holding it): returns true when it
     * was answered or dropped, false when it is to be forwarded anyway (dry run).
     */
    private boolean refuse(Counter over, ByteBuf message, Channel client, InetSocketAddress clientAddress) {
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

    /** The end of a read burst: what was parked goes to Redis. (Writes leave at the end of the wake-up.) */
    void endOfBurst() {
        RedisBackend.endOfBurst(exact);
    }

    Meters meters() {
        return meters;
    }
}
