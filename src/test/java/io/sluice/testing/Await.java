package io.sluice.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Waits for a condition, looking every millisecond, and fails the test when it does not come in time. */
public final class Await {
    private Await() {
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
}
