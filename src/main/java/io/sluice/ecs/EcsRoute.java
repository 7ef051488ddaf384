package io.sluice.ecs;

import io.sluice.pipeline.Route;
import io.sluice.pipeline.WrappedRoute;

/**
 * The route of a query whose Client Subnet sluice changed, wrapped so that its answer goes back
 * with the option the client is owed (RFC 7871 section 7.2.2): none when the client sent none, its
 * own with the upstream's scope when it sent one; and without an OPT record when the client's
 * query had none. Every other method is its client's route's.
 */
final class EcsRoute extends WrappedRoute {
    private final Route route;
    /** The client's own option (code, length, data), its scope octet to be set; null: it sent none. */
    final byte[] clientOption;
    /** The OPT record was added to carry the option: the client's query had none. */
    final boolean addedOpt;
    /** The most a UDP answer to it may carry: the payload size its query offered, at most max-udp-size. */
    final int udpLimit;

    EcsRoute(Route route, byte[] clientOption, boolean addedOpt, int udpLimit) {
        this.route = route;
        this.clientOption = clientOption;
        this.addedOpt = addedOpt;
        this.udpLimit = udpLimit;
    }

    @Override
    public Route wrapped() {
        return route;
    }
}
