package io.sluice.pipeline;

import io.netty.channel.EventLoop;

/**
 * One feature's part in each event loop's query path, made once by the feature's setup from its
 * settings: its stage on every loop, what it runs beside the queries once the listeners are open,
 * and its stop. The server lists its modules in the order of the query path, asks each for its
 * stage on every loop, and stops them in reverse after the loops' last query.
 */
@FunctionalInterface
public interface Module extends AutoCloseable {
    /** Its stage in {@code loop}'s query path, made once per loop. */
    Stage stage(EventLoop loop);

    /** Starts what runs beside the queries (a log writer, a janitor), once the listeners are open. */
    default void start() {
    }

    /** Stops what it runs, once no loop runs a query. */
    @Override
    default void close() throws Exception {
    }
}
