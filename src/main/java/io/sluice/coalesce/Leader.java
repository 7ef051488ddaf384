package io.sluice.coalesce;

import io.sluice.pipeline.Route;
import io.sluice.pipeline.WrappedRoute;
import io.sluice.wire.AnswerKey;

/**
 * A query that others wait on: the route its answer goes to, wrapped (as CoreDNS's plugins wrap
 * the ResponseWriter) so that the stage that made it knows the answer on the way back; every
 * method is its client's route's. It keeps its key, to tell two keys of one hash apart, and the
 * queries that joined it, last joined first. Reused: one stage's, on its loop.
 */
final class Leader extends WrappedRoute {
    final CoalesceStage stage;
    /** The client's route, which answers go to; left in place after the leader is done, until it is reused. */
    Route route;
    final byte[] key = new byte[AnswerKey.MAX_BYTES];
    int keyLength;
    long hash;
    /** Found in the stage's table (not: it filled, and another took its place there). */
    boolean inTable;
    Waiter waiters;
    int waiterCount;

    Leader(CoalesceStage stage) {
        this.stage = stage;
    }

    @Override
    public Route wrapped() {
        return route;
    }
}
