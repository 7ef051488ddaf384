package io.sluice.ecs;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.pipeline.Answer;
import io.sluice.pipeline.AnswerSide;
import io.sluice.pipeline.Outcome;
import io.sluice.pipeline.Query;
import io.sluice.pipeline.Stage;
import io.sluice.pipeline.WrappedRoute;
import io.sluice.transport.Transport;
import io.sluice.wire.ClientSubnet;
import io.sluice.wire.QueryView;
import io.sluice.wire.Wire;
import java.net.Inet4Address;
import java.net.InetAddress;

/**
 * EDNS Client Subnet on the query path. On the way in, a client's option that RFC 7871 section
 * 7.1.2 forbids (another family, a prefix longer than the address, octets or bits past the prefix)
 * is FORMERR, in every mode; then, by mode, the query goes on as sent (off, pass), or rewritten
 * with its client's network (add, replace) into this loop's buffer ({@link Query#rewrite}), its
 * route wrapped to say what the client is owed back ({@link EcsRoute}). A client's source prefix
 * of 0 ("do not use my address") is kept in every mode, and a signed query (TSIG, SIG(0)) goes as
 * signed. On the way back, the answer of a rewritten
 * query carries the client's own option with the upstream's scope, or none when it sent none.
 * One per event loop.
 */
final class EcsStage implements Stage, AnswerSide {
    /** The largest query sluice reads, and the option it may add with an OPT record. */
    private static final int REWRITE_BYTES = 65_535 + 64;

    private final ClientSubnets module;
    private final EcsMeters meters;
    /** The query as rewritten, valid while the stages run: the forwarder and a parked query copy it. */
    private final ByteBuf rewritten = Unpooled.buffer(REWRITE_BYTES, REWRITE_BYTES);
    private final byte[] ipv4 = new byte[4];
    private final byte[] clientAddress = new byte[16];

    EcsStage(ClientSubnets module, EcsMeters meters) {
        this.module = module;
        this.meters = meters;
    }

    @Override
    public Outcome handle(Query q) {
        ByteBuf m = q.message();
        QueryView view = q.view();
        int at = view.optAt() < 0 ? -1 : ClientSubnet.find(m, view);
        if (at >= 0 && (!ClientSubnet.wellFormed(m, at) || !ClientSubnet.alone(m, view, at))) {
            meters.malformed.increment();
            q.answerWithQuestion(0, Wire.RCODE_FORMERR, 0, null);
            return Outcome.ANSWERED;
        }
        ClientSubnets.Policy policy = module.policy();
        if (policy.mode() == EcsSettings.Mode.OFF || policy.mode() == EcsSettings.Mode.PASS || !view.hasQuestion()
                || view.recordsBesidesOpt(m) || at >= 0 && ClientSubnet.sourcePrefix(m, at) == 0) {
            if (at >= 0) { // as sent; its answer, from the cache too, echoes it
                q.reroute(new EcsRoute(q.route(), clientOption(m, at), false, udpLimit(m, view)));
            }
            return Outcome.CONTINUE; // nothing to add, or the client asked that its address go nowhere
        }
        byte[] address;
        int source;
        if (at >= 0 && policy.mode() == EcsSettings.Mode.ADD) { // its own, cut to at most the prefix
            int family = ClientSubnet.family(m, at);
            int most = family == ClientSubnet.FAMILY_IPV4 ? policy.ipv4Prefix() : policy.ipv6Prefix();
            source = ClientSubnet.sourcePrefix(m, at);
            if (source <= most) {
                q.reroute(new EcsRoute(q.route(), clientOption(m, at), false, udpLimit(m, view)));
                return Outcome.CONTINUE;
            }
            address = family == ClientSubnet.FAMILY_IPV4 ? ipv4 : clientAddress;
            ClientSubnet.address(m, at, address);
            source = most;
            meters.cut.increment();
        } else {
            InetAddress client = q.clientIp();
            if (client instanceof Inet4Address) {
                int a = client.hashCode(); // the address, big-endian, as Inet4Address keeps it
                ipv4[0] = (byte) (a >>> 24);
                ipv4[1] = (byte) (a >>> 16);
                ipv4[2] = (byte) (a >>> 8);
                ipv4[3] = (byte) a;
                address = ipv4;
                source = policy.ipv4Prefix();
            } else {
                address = client.getAddress();
                source = policy.ipv6Prefix();
            }
            (at >= 0 ? meters.replaced : meters.added).increment();
        }
        EcsRoute route = new EcsRoute(q.route(), at >= 0 ? clientOption(m, at) : null, view.optAt() < 0,
                udpLimit(m, view));
        ClientSubnet.rewrite(m, view, at, rewritten, address, source);
        q.rewrite(rewritten);
        q.reroute(route);
        return Outcome.CONTINUE;
    }

    /** The most a UDP answer to the client's query may carry. */
    private int udpLimit(ByteBuf m, QueryView view) {
        return Math.min(module.maxUdpSize(), view.udpPayload(m));
    }

    /** A copy of the client's option at {@code at}: code, length and data. */
    private static byte[] clientOption(ByteBuf m, int at) {
        byte[] option = new byte[4 + m.getUnsignedShort(at + 2)];
        m.getBytes(at, option);
        return option;
    }

    @Override
    public AnswerSide answers() {
        return this;
    }

    /**
     * What the client is owed back: its own option with the upstream's scope, or none. A cached
     * answer kept the upstream's option, for the network its key names, which is the query's.
     */
    @Override
    public void answer(Answer a) {
        ByteBuf m = a.message();
        EcsRoute route = m == null ? null : WrappedRoute.find(a.route(), EcsRoute.class);
        if (route == null) {
            return;
        }
        if (route.addedOpt) {
            ClientSubnet.removeOpt(m);
        } else if (route.clientOption == null) {
            ClientSubnet.removeFromAnswer(m);
        } else {
            int at = ClientSubnet.findInMessage(m);
            if (at >= 0) {
                route.clientOption[7] = (byte) ClientSubnet.scopePrefix(m, at); // the scope octet
                // the client's option may be longer than the one kept: past its UDP size, the answer leaves cut
                a.rewritten(ClientSubnet.replaceInAnswer(Transport.ALLOCATOR, m, route.clientOption,
                        route.clientOption.length), route.udpLimit);
            }
        }
    }
}
