package io.sluice.pipeline;

import io.sluice.metrics.Registry;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Exceptions caught on the query path: a bug, met by a message or an answer no test had. Each is
 * counted ({@code internal_errors}) and logged with its stack, the first and then at most one a
 * minute across the loops, so that one bad query neither breaks its loop's read nor floods the
 * log. Shared by every loop; called on them.
 */
public final class InternalErrors {
    private static final Logger log = LoggerFactory.getLogger(InternalErrors.class);
    private static final long LOG_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final LongAdder count;
    /** When the last one was logged; {@code Long.MIN_VALUE}: never. */
    private final AtomicLong lastLogged = new AtomicLong(Long.MIN_VALUE);

    public InternalErrors(LongAdder count) {
        this.count = count;
    }

    /** Counting into {@code internal_errors} of {@code meters}. */
    public static InternalErrors declaredIn(Registry meters) {
        return new InternalErrors(meters.counter("internal_errors",
                "Exceptions caught on the query path (a stage, or what sees the upstreams' answers): a bug, logged with its stack at most once a minute; the query is dropped, or goes on without what failed."));
    }

    /**
     * What a log line calls {@code part}: its class's simple name, or the full name of an anonymous
     * class, whose simple name is empty.
     */
    public static String nameOf(Object part) {
        Class<?> c = part.getClass();
        return c.getSimpleName().isEmpty() ? c.getName() : c.getSimpleName();
    }

    /**
     * Counts {@code e}, caught in {@code where} on {@code what}, and logs it unless one was logged
     * less than a minute ago; {@code then} says what became of the query.
     */
    public void caught(String where, String what, String then, RuntimeException e) {
        count.increment();
        long now = System.nanoTime();
        long last = lastLogged.get();
        if ((last == Long.MIN_VALUE || now - last >= LOG_EVERY_NANOS) && lastLogged.compareAndSet(last, now)) {
            log.error("internal error in {} on {} (counted in internal_errors; logged at most once a minute), {}",
                    where, what, then, e);
        }
    }
}
