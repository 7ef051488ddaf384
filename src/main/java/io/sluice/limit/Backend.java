package io.sluice.limit;

import java.util.concurrent.ScheduledExecutorService;

/**
 * What runs beside the limiter's counters to make each event loop's decisions: nothing for memory
 * and Chronicle Map ({@link Local}), Redis's links for Redis. {@code backend.Backends} names them.
 */
public interface Backend extends Decisions.Maker, AutoCloseable {

    /** What the startup line adds to the store's own description; empty when nothing. */
    String describe();

    @Override
    void close();

    /** Memory and Chronicle Map: the limiter's own counters decide at once; nothing runs beside them. */
    record Local(Decisions.Maker decisions) implements Backend {
        @Override
        public Decisions forLoop(ScheduledExecutorService loop, Decisions.Verdicts verdicts) {
            return decisions.forLoop(loop, verdicts);
        }

        @Override
        public String describe() {
            return "";
        }

        @Override
        public void close() {
        }
    }
}
