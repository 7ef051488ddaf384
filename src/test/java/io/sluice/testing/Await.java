package io.sluice.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Waits for a condition, looking every millisecond, and fails the test when it does not come in time. */
public final class Await {
    private Await() {
    }

    /** One try at something that may not be there yet: null until it is. */
    @FunctionalInterface
    public interface Attempt<T, E extends Exception> {
        T get() throws E;
    }

    /** Returns once {@code condition} holds; fails with {@code what} after {@code timeout}. */
    public static void until(String what, Duration timeout, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("waited " + timeout.toMillis() + " ms for " + what);
            }
            LockSupport.parkNanos(1_000_000);
        }
    }

    /** Waits up to 10 s for {@code condition}. */
    public static void until(String what, BooleanSupplier condition) {
        until(what, Duration.ofSeconds(10), condition);
    }

    /**
     * Tries {@code attempt} until it gives something other than null, and returns that; fails with
     * {@code what} after {@code timeout}, or at once with what an attempt throws.
     */
    public static <T, E extends Exception> T result(String what, Duration timeout, Attempt<T, E> attempt) throws E {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (T got = attempt.get(); ; got = attempt.get()) {
            if (got != null) {
                return got;
            }
            if (System.nanoTime() - deadline > 0) {
                fail("waited " + timeout.toMillis() + " ms for " + what);
            }
            LockSupport.parkNanos(1_000_000);
        }
    }
}
