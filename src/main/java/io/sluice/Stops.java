package io.sluice;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The stops of what a start made, the last made on top: {@link #close} runs them in reverse, once,
 * for a server's close and for a start that failed part way alike. Pushed by the starting thread
 * only, before the server is shared; the close that wins {@link #closing} is the only one to pop.
 */
final class Stops implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Stops.class);

    /** A part's stop: run once, by close or by a failed start. */
    @FunctionalInterface
    interface Stop {
        void run() throws Exception;
    }

    private final Deque<Stop> stops = new ArrayDeque<>();
    /** A close has begun: a second call waits for the first to end, and does nothing more. */
    private final AtomicBoolean closing = new AtomicBoolean();
    private final CountDownLatch closed = new CountDownLatch(1);

    /** Adds the stop of what was just made. */
    void push(Stop stop) {
        stops.push(stop);
    }

    /** Runs every stop, the last pushed first; one that fails is logged and the rest still run. */
    @Override
    public void close() {
        if (!closing.compareAndSet(false, true)) {
            try {
                closed.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        try {
            while (!stops.isEmpty()) {
                try {
                    stops.pop().run();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (Exception e) { // the other parts are stopped all the same
                    log.warn("while stopping: {}", e.toString(), e);
                }
            }
        } finally {
            closed.countDown();
        }
    }
}
