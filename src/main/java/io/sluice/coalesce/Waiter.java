package io.sluice.coalesce;

import io.netty.buffer.ByteBuf;
import io.sluice.pipeline.Route;

/** A query joined to a {@link Leader}: a copy of its bytes and where its answer goes. Reused. */
final class Waiter {
    ByteBuf query;
    Route route;
    long answerNote;
    Waiter next;
}
