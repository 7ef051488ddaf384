package io.sluice.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.limit.ManualClock;
import io.sluice.testing.Await;
import io.sluice.testing.Dns;
import io.sluice.testing.RedisServer;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.xbill.DNS.Rcode;

/**
 * The limiter's contract, the same for every backend: each algorithm hands out exactly its budget
 * and gives it back as its time passes, whether the words live in memory, in a Chronicle Map file
 * or in a real redis-server (both modes). As bucket4j runs one suite against each of its stores:
 * a backend that stores a word wrongly fails here, whichever algorithm it breaks.
 */
class LimiterContractTest {
    private static final long HOUR_MS = 3_600_000;

    @TempDir
    Path dir;
    private final ManualClock clock = new ManualClock();
    private TestUpstream upstream;
    private RedisServer redis;

    static Stream<Arguments> backendsAndAlgorithms() {
        List<Arguments> all = new ArrayList<>();
        for (String backend : new String[] {"memory", "chronicle", "redis-exact", "redis-async"}) {
            for (String algorithm : new String[] {"fixed-window", "sliding-window", "token-bucket"}) {
                all.add(Arguments.of(backend, algorithm));
            }
        }
        return all.stream();
    }

    @BeforeEach
    void setUp() throws Exception {
        upstream = new TestUpstream();
    }

    @AfterEach
    void tearDown() throws Exception {
        upstream.close();
        if (redis != null) {
            redis.close();
        }
    }

    private RunningSluice sluice(String backend, String algorithm) throws Exception {
        List<String> kv = new ArrayList<>(List.of("limits.default.queries", "6", "limits.default.window", "1h",
                "limits.algorithm", algorithm));
        switch (backend) {
            case "memory" -> { }
            case "chronicle" -> kv.addAll(List.of("backend", "chronicle",
                    "state-file", dir.resolve("counters.dat").toString()));
            default -> {
                RedisServer.assumeInstalled();
                redis = RedisServer.start(dir);
                kv.addAll(List.of("backend", "redis", "redis", redis.uri(), "redis-timeout", "500ms",
                        "redis-mode", backend.equals("redis-exact") ? "exact" : "async"));
            }
        }
        return RunningSluice.start(List.of(upstream), clock, b -> { }, kv.toArray(new String[0]));
    }

    /**
     * Async mode's sync thread reads the clock when a pass pushes and again when it merges the
     * reply: a pass straddling a clock moved by an hour is one no running fleet's clock makes.
     * Three more passes let the passes of what was just allowed end before the clock moves.
     */
    private static void settle(String backend, RunningSluice s) {
        if (backend.equals("redis-async")) {
            long from = s.sluice().metrics().count("redis_sync_passes");
            Await.until("three sync passes", () -> s.sluice().metrics().count("redis_sync_passes") >= from + 3);
        }
    }

    private static int allowed(RunningSluice s, String domain, int queries) throws Exception {
        List<InetSocketAddress> at = List.of(s.address());
        int[] r = Dns.burst(at, Dns.names(domain, queries));
        assertEquals(queries, r[Rcode.NOERROR] + r[Rcode.REFUSED], "each query allowed or refused");
        return r[Rcode.NOERROR];
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("backendsAndAlgorithms")
    void handsOutExactlyTheBudgetAndGivesItBackWithTime(String backend, String algorithm) throws Exception {
        // The window starts on the hour, so that the sliding window's share below is exact.
        clock.advanceMillis(HOUR_MS - clock.epochNanos() / 1_000_000 % HOUR_MS);
        try (RunningSluice s = sluice(backend, algorithm)) {
            assertEquals(6, allowed(s, "budget.com", 20), "the budget of 6");
            assertEquals(0, allowed(s, "budget.com", 5), "none left");
            assertEquals(6, allowed(s, "other.net", 8), "each domain has its own");

            settle(backend, s);
            clock.advanceMillis(HOUR_MS + HOUR_MS / 2); // half-way through the next window
            int expected = switch (algorithm) {
                case "fixed-window" -> 6;   // a new window, a new budget
                case "sliding-window" -> 3; // half of the last window's 6 still count
                default -> 6;               // 90 minutes refill the bucket: 6 tokens at most
            };
            assertEquals(expected, allowed(s, "budget.com", 20), "after an hour and a half");

            settle(backend, s);
            clock.advanceMillis(HOUR_MS / 6);
            expected = switch (algorithm) {
                case "fixed-window" -> 0;   // still the same window
                case "sliding-window" -> 1; // 2/3 of the window gone: 6 * 1/3 + 3 = 5 count, 6 - 5
                default -> 1;               // a token every ten minutes
            };
            assertEquals(expected, allowed(s, "budget.com", 20), "ten minutes later");
        }
    }
}
