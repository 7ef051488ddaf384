package io.sluice.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Assumptions;

/**
 * A program some tests need (redis-server, nsd): without it they are skipped, with one line
 * saying so per kind; with its {@code SLUICE_REQUIRE_*} variable set (as {@code .ci/run} does) they
 * fail instead.
 */
final class Prerequisite {
    private static final Set<String> skipSaid = ConcurrentHashMap.newKeySet();

    private Prerequisite() {
    }

    /**
     * @param kind       what the skipped tests are, for the line ("Redis tests")
     * @param present    whether the program is installed
     * @param why        what is missing and how to install it
     * @param requireEnv the variable that makes a missing program a failure
     */
    static void assume(String kind, boolean present, String why, String requireEnv) {
        if (present) {
            return;
        }
        if (System.getenv(requireEnv) != null) {
            fail(why + ", and " + requireEnv + " is set");
        }
        if (skipSaid.add(kind)) {
            System.err.println("sluice tests: " + kind + " skipped: " + why);
        }
        Assumptions.abort(why);
    }
}
