package io.sluice.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.limit.ManualClock;
import io.sluice.testing.Await;
import io.sluice.testing.Dns;
import io.sluice.testing.RedisServer;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/** Counters shared through a real redis-server: exact across instances and a cluster, failure policies, expiry, async. */
class RedisBackendTest {
    private static final long HOUR_MS = 3_600_000;

    @TempDir
    Path dir;
    /** Both instances read this clock: time moves only when a test says so. */
    private final ManualClock clock = new ManualClock();
    private TestUpstream upstream;

    @BeforeEach
    void setUp() throws Exception {
        RedisServer.assumeInstalled();
        upstream = new TestUpstream();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (upstream != null) {
            upstream.close();
        }
    }

    private RunningSluice sluice(String... keyValues) throws Exception {
        List<String> all = new ArrayList<>(List.of("backend", "redis", "limits.default.window", "1h",
                "redis-timeout", "200ms"));
        all.addAll(List.of(keyValues));
        return RunningSluice.start(List.of(upstream), clock, b -> { }, all.toArray(new String[0]));
    }

    /** The key of {@code domain}'s word, with the tests' one-hour window. */
    private static String key(String domain, String algorithm) {
        return "sluice:{" + domain + "}:" + algorithm + ":" + HOUR_MS + "ms";
    }

    /** The count of the current window in a fixed-window word Redis holds, or -1 for none. */
    private long fixedWindowCount(RedisServer redis, String domain) {
        String word = redis.command("GET " + key(domain, "fixed-window"));
        if (word.equals("$-1")) {
            return -1;
        }
        long w = Long.parseLong(word);
        long window = clock.epochNanos() / TimeUnit.HOURS.toNanos(1);
        return (int) (w >>> 32) == (int) window ? w & 0xFFFFFFFFL : 0;
    }

    @Test
    void twoInstancesOnOneRedisHandOutExactlyTheLimitPerWindow() throws Exception {
        try (RedisServer redis = RedisServer.start(dir);
             RunningSluice a = sluice("redis", redis.uri(), "limits.default.queries", "10");
             RunningSluice b = sluice("redis", redis.uri(), "limits.default.queries", "10")) {
            List<InetSocketAddress> both = List.of(a.address(), b.address());
            int[] r = Dns.burst(both, Dns.names("shared.com", 60));
            assertEquals(10, r[Rcode.NOERROR], "exactly the limit between the two");
            assertEquals(50, r[Rcode.REFUSED]);
            r = Dns.burst(both, Dns.names("shared.com", 20));
            assertEquals(0, r[Rcode.NOERROR], "still the same window");

            assertEquals(10, fixedWindowCount(redis, "shared.com"), "only allowed queries are counted");
            long ttl = Long.parseLong(redis.command("PTTL " + key("shared.com", "fixed-window")).substring(1));
            assertTrue(ttl > 0 && ttl <= HOUR_MS, "the key expires after its window: " + ttl);

            clock.advanceMillis(HOUR_MS);
            r = Dns.burst(both, Dns.names("shared.com", 30));
            assertEquals(10, r[Rcode.NOERROR], "a new window, a new budget");
        }
    }

    @Test
    void exactModeKeepsTheVerifiedShareForQueriesOverTcp() throws Exception {
        try (RedisServer redis = RedisServer.start(dir);
             RunningSluice s = sluice("redis", redis.uri(), "limits.default.queries", "10",
                     "limits.verified-share", "0.5")) {
            int[] r = Dns.burst(List.of(s.address()), Dns.names("shared.com", 30));
            assertEquals(5, r[Rcode.NOERROR], "unverified queries over UDP stop at half: " + rcodes(r));
            int answered = 0;
            for (int i = 0; i < 10; i++) {
                byte[] q = Dns.query(i, "tcp" + i + ".shared.com.", org.xbill.DNS.Type.A);
                answered += Dns.rcode(Dns.tcp(s.address(), q)) == Rcode.NOERROR ? 1 : 0;
            }
            assertEquals(5, answered, "verified ones spend the rest of the budget, and no more");
            assertEquals(10, fixedWindowCount(redis, "shared.com"));
        }
    }

    @Test
    void aBusyDomainStaysExactWhileItsRoundsOverlap() throws Exception {
        // Thousands of queries at once for one domain, over four sockets and two loops: rounds of
        // calls overlap and loops race for the domain's word. With failure "open", any query that
        // fell to the failure policy would be answered past the budget.
        try (RedisServer redis = RedisServer.start(dir);
             RunningSluice s = sluice("redis", redis.uri(), "limits.default.queries", "3000",
                     "redis-failure", "open", "redis-timeout", "1s", "threads", "2")) {
            InetSocketAddress at = s.address();
            int[] r = Dns.burst(List.of(at, at, at, at), Dns.names("busy.org", 4000));
            assertEquals(3000, r[Rcode.NOERROR], rcodes(r));
            assertEquals(1000, r[Rcode.REFUSED], rcodes(r));
        }
    }

    @Test
    void aWordRedisHasExpiredIsNoConflict() throws Exception {
        for (String mode : new String[] {"exact", "async"}) {
            // one loop: two loops' rounds can lose to each other now and then (ExactDecisions), a
            // conflict that is not the one this test looks for
            try (RedisServer redis = RedisServer.start(dir);
                 RunningSluice s = sluice("redis", redis.uri(), "redis-mode", mode, "sync-interval", "20ms",
                         "limits.default.queries", "5", "threads", "1")) {
                assertEquals(3, Dns.burst(List.of(s.address()), Dns.names("expiring.net", 3))[Rcode.NOERROR]);
                awaitCount(redis, "expiring.net", 3);
                clock.advanceMillis(HOUR_MS);
                redis.command("DEL " + key("expiring.net", "fixed-window")); // as Redis expires it, on its own clock
                assertEquals(3, Dns.burst(List.of(s.address()), Dns.names("expiring.net", 3))[Rcode.NOERROR], mode);
                awaitCount(redis, "expiring.net", 3);
                assertEquals(0, s.sluice().metrics().count("redis_conflicts"),
                        mode + ": a word that changes no decision any more matches an expired key");
            }
        }
    }

    @Test
    void aValueSluiceDidNotWriteCountsAsNone() throws Exception {
        try (RedisServer redis = RedisServer.start(dir);
             RunningSluice s = sluice("redis", redis.uri(), "limits.default.queries", "5")) {
            // DEAD; another negative with its low 24 bits zero; past a long; not as sluice writes
            String[] foreign = {"-9223372036854775808", "-16777216", "9223372036854775808", "05", "+7", "garbage"};
            for (int i = 0; i < foreign.length; i++) {
                String domain = "foreign" + i + ".com";
                redis.command("SET " + key(domain, "fixed-window") + " " + foreign[i]);
                assertEquals(3, Dns.burst(List.of(s.address()), Dns.names(domain, 3))[Rcode.NOERROR], foreign[i]);
                assertEquals(3, fixedWindowCount(redis, domain), foreign[i] + " is replaced by the word");
            }
        }
    }

    /** Waits for a fixed-window count in Redis: at once in exact mode, after a sync in async mode. */
    private void awaitCount(RedisServer redis, String domain, long count) {
        Await.until(domain + "'s count in Redis to be " + count, () -> fixedWindowCount(redis, domain) == count);
    }

    /** Waits until {@code s}'s sync thread has run {@code n} passes more than it had. */
    private static void awaitPasses(RunningSluice s, int n) {
        long from = s.sluice().metrics().count("redis_sync_passes");
        Await.until(n + " sync passes", () -> s.sluice().metrics().count("redis_sync_passes") >= from + n);
    }

    /** 6,400 an hour: leases of 64, taken while the window's count stays under 3,200. */
    @Test
    void exactModeLeasesADomainFarFromItsBudget() throws Exception {
        try (RedisServer redis = RedisServer.start(dir);
             RunningSluice a = sluice("redis", redis.uri(), "limits.default.queries", "6400")) {
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(a.address(), Dns.query(1, "q0.far.com.", Type.A))));
            assertEquals(65, fixedWindowCount(redis, "far.com"), "its query and a lease of 64, in Redis first");
            for (int i = 1; i <= 65; i++) {
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(a.address(), Dns.query(i + 1, "q" + i + ".far.com.", Type.A))));
            }
            assertEquals(64, a.sluice().metrics().count("redis_leased"), "the lease spent without a call");
            assertEquals(130, fixedWindowCount(redis, "far.com"), "the 66th query asked, and took the next lease");
        }
    }

    /** A lease ends with the window it was taken in: what is left of it is not spent in the next. */
    @Test
    void aLeaseEndsWithItsWindow() throws Exception {
        try (RedisServer redis = RedisServer.start(dir);
             RunningSluice a = sluice("redis", redis.uri(), "limits.default.queries", "6400")) {
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(a.address(), Dns.query(1, "q0.ends.com.", Type.A))));
            assertEquals(65, fixedWindowCount(redis, "ends.com"), "its query and a lease of 64");
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(a.address(), Dns.query(2, "q1.ends.com.", Type.A))));
            assertEquals(1, a.sluice().metrics().count("redis_leased"), "63 of the lease left");
            clock.advanceMillis(HOUR_MS); // the next window
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(a.address(), Dns.query(3, "q2.ends.com.", Type.A))));
            assertEquals(1, a.sluice().metrics().count("redis_leased"), "the old lease is not spent in a new window");
            assertEquals(65, fixedWindowCount(redis, "ends.com"), "the query asked, and took the window's own lease");
        }
    }

    /**
     * A reload to a budget with no share (under 4,096) finds a domain holding counts: it is pushed
     * as its count here reaches 64, not at its next look, a wheel's turn later.
     */
    @Test
    void aBudgetCutToNoShareGetsAHeldDomainPushed() throws Exception {
        Path conf = dir.resolve("sluice.yml");
        String head = "upstreams: [" + upstream.hostPort() + "]\nbackend: redis\nredis-timeout: 200ms\n"
                + "redis-mode: async\nsync-interval: 50ms\n";
        try (RedisServer redis = RedisServer.start(dir)) {
            head += "redis: " + redis.uri() + "\n";
            Files.writeString(conf, head + "limits:\n  default: { queries: 6400, window: 1h }\n");
            try (RunningSluice a = RunningSluice.startFor(List.of(), clock, x -> x.configFile(conf))) {
                assertEquals(50, Dns.burst(List.of(a.address()), Dns.names("held.com", 50))[Rcode.NOERROR]);
                awaitPasses(a, 2); // taken by a pass, and held: looked at again 63 passes (3.15 s) later
                assertEquals(-1, fixedWindowCount(redis, "held.com"));
                Files.writeString(conf, head + "limits:\n  default: { queries: 1000, window: 1h }\n");
                a.sluice().reload();
                assertEquals(14, Dns.burst(List.of(a.address()), Dns.names("held.com", 14))[Rcode.NOERROR]);
                // pushed as its count reached 64, well before the held domain's next look
                Await.until("held.com pushed at 64", Duration.ofMillis(1500),
                        () -> fixedWindowCount(redis, "held.com") == 64);
            }
        }
    }

    /** A reload that lowers the budget ends a lease taken under the old one: it is not spent past the new. */
    @Test
    void aLoweredBudgetEndsTheLease() throws Exception {
        Path conf = dir.resolve("sluice.yml");
        String head = "upstreams: [" + upstream.hostPort() + "]\nbackend: redis\nredis-timeout: 200ms\n";
        try (RedisServer redis = RedisServer.start(dir)) {
            head += "redis: " + redis.uri() + "\n";
            Files.writeString(conf, head + "limits:\n  default: { queries: 6400, window: 1h }\n");
            try (RunningSluice a = RunningSluice.startFor(List.of(), clock, x -> x.configFile(conf))) {
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(a.address(), Dns.query(1, "q.cut.com.", Type.A))));
                assertEquals(65, fixedWindowCount(redis, "cut.com"), "a lease of 64 taken");
                Files.writeString(conf, head + "limits:\n  default: { queries: 100, window: 1h }\n");
                a.sluice().reload();
                int answered = 0;
                for (int i = 0; i < 40; i++) {
                    answered += Dns.rcode(Dns.udp(a.address(), Dns.query(i + 2, "q" + i + ".cut.com.", Type.A)))
                            == Rcode.NOERROR ? 1 : 0;
                }
                assertEquals(35, answered, "100 less the 65 counted, query by query");
                assertEquals(0, a.sluice().metrics().count("redis_leased"), "nothing spent of the old lease");
            }
        }
    }

    /** Leases are counted before they are spent: two instances never answer more than the budget. */
    @Test
    void leasesKeepTwoInstancesWithinTheBudget() throws Exception {
        try (RedisServer redis = RedisServer.start(dir);
             RunningSluice a = sluice("redis", redis.uri(), "limits.default.queries", "4096");
             RunningSluice b = sluice("redis", redis.uri(), "limits.default.queries", "4096")) {
            for (int i = 0; i < 3; i++) { // compiled first: a cold JVM's rounds lose so often that many time out
                Dns.burst(List.of(a.address(), b.address()), Dns.names("warm" + i + ".com", 5000));
            }
            long failedBefore = a.sluice().metrics().count("redis_failure_decisions")
                    + b.sluice().metrics().count("redis_failure_decisions");
            int[] r = Dns.burst(List.of(a.address(), b.address()), Dns.names("busy.com", 5000));
            long counted = fixedWindowCount(redis, "busy.com");
            long failed = a.sluice().metrics().count("redis_failure_decisions")
                    + b.sluice().metrics().count("redis_failure_decisions") - failedBefore;
            String seen = r[Rcode.NOERROR] + " answered, " + r[Rcode.REFUSED] + " refused, " + counted + " counted, "
                    + failed + " decided by redis-failure, " + (a.sluice().metrics().count("redis_conflicts")
                    + b.sluice().metrics().count("redis_conflicts")) + " conflicts";
            // never more than the budget, but for what Redis did not decide in time (a loaded machine)
            assertTrue(counted <= 4096 && r[Rcode.NOERROR] <= counted + failed, "never more than the budget: " + seen);
            if (failed == 0) { // what may be left unspent: about a lease of 64 per loop of each instance
                assertTrue(r[Rcode.NOERROR] >= 4096 - 2 * 2 * 64, "the leases spent as the burst went on: " + seen);
            }
            assertTrue(a.sluice().metrics().count("redis_leased") + b.sluice().metrics().count("redis_leased") > 0);
        }
    }

    @Test
    void slidingWindowIsExactToo() throws Exception {
        try (RedisServer redis = RedisServer.start(dir);
             RunningSluice a = sluice("redis", redis.uri(), "limits.default.queries", "8",
                     "limits.algorithm", "sliding-window");
             RunningSluice b = sluice("redis", redis.uri(), "limits.default.queries", "8",
                     "limits.algorithm", "sliding-window")) {
            List<InetSocketAddress> both = List.of(a.address(), b.address());
            assertEquals(8, Dns.burst(both, Dns.names("slide.org", 30))[Rcode.NOERROR]);
            // Half-way through the next window half of the last window's 8 still count.
            clock.advanceMillis(HOUR_MS + HOUR_MS / 2 - clock.epochNanos() / 1_000_000 % HOUR_MS);
            assertEquals(4, Dns.burst(both, Dns.names("slide.org", 30))[Rcode.NOERROR]);
        }
    }

    @Test
    void aTokenBucketIsSharedExactlyToo() throws Exception {
        // 10 an hour with a burst of 5: a token every six minutes, at most five saved.
        try (RedisServer redis = RedisServer.start(dir);
             RunningSluice a = sluice("redis", redis.uri(), "limits.default.queries", "10",
                     "limits.algorithm", "token-bucket", "limits.burst", "5");
             RunningSluice b = sluice("redis", redis.uri(), "limits.default.queries", "10",
                     "limits.algorithm", "token-bucket", "limits.burst", "5")) {
            List<InetSocketAddress> both = List.of(a.address(), b.address());
            assertEquals(5, Dns.burst(both, Dns.names("bucket.net", 30))[Rcode.NOERROR], "the burst, between the two");
            clock.advanceMillis(HOUR_MS / 10);
            assertEquals(1, Dns.burst(both, Dns.names("bucket.net", 10))[Rcode.NOERROR], "one token in six minutes");
            clock.advanceMillis(HOUR_MS);
            assertEquals(5, Dns.burst(both, Dns.names("bucket.net", 30))[Rcode.NOERROR], "a full bucket holds the burst");
            long ttl = Long.parseLong(redis.command("PTTL " + key("bucket.net", "token-bucket")).substring(1));
            assertTrue(ttl > 0 && ttl <= HOUR_MS / 2, "the word expires once the bucket is full again: " + ttl);
        }
    }

    @Test
    void asyncModeSharesATokenBucket() throws Exception {
        try (RedisServer redis = RedisServer.start(dir);
             RunningSluice a = sluice("redis", redis.uri(), "redis-mode", "async", "sync-interval", "20ms",
                     "limits.default.queries", "10", "limits.algorithm", "token-bucket");
             RunningSluice b = sluice("redis", redis.uri(), "redis-mode", "async", "sync-interval", "20ms",
                     "limits.default.queries", "10", "limits.algorithm", "token-bucket")) {
            assertEquals(10, Dns.burst(List.of(a.address()), Dns.names("drip.org", 12))[Rcode.NOERROR], "decided locally");
            String key = key("drip.org", "token-bucket");
            Await.until("a's sync to reach Redis", () -> !redis.command("GET " + key).equals("$-1"));
            awaitPasses(a, 2); // and all of a's ten: a burst's counts may reach Redis over two passes
            // b's bucket is full until its first sync takes a's ten tokens from it.
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(b.address(), Dns.query(1, "x.drip.org.", Type.A))));
            awaitPasses(b, 2);
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.udp(b.address(), Dns.query(2, "y.drip.org.", Type.A))),
                    "b learns that the fleet has spent the bucket");
        }
    }

    @Test
    void aThreeMasterClusterHandsOutExactlyTheLimitPerDomain() throws Exception {
        List<RedisServer> nodes = RedisServer.cluster(dir);
        try {
            String seeds = nodes.get(0).hostPort() + "," + nodes.get(1).hostPort();
            try (RunningSluice a = sluice("redis-cluster", seeds, "limits.default.queries", "7");
                 RunningSluice b = sluice("redis-cluster", seeds, "limits.default.queries", "7")) {
                List<String> all = new ArrayList<>();
                String[] domains = {"alpha.com", "beta.net", "gamma.co.uk", "delta.github.io", "epsilon.org"};
                for (String d : domains) {
                    all.addAll(Dns.names(d, 20));
                }
                int[] r = Dns.burst(List.of(a.address(), b.address()), all);
                assertEquals(7 * domains.length, r[Rcode.NOERROR], "7 for each of 5 domains");
                int keysOnNodes = 0;
                for (RedisServer n : nodes) {
                    keysOnNodes += Integer.parseInt(n.command("DBSIZE").substring(1)) > 0 ? 1 : 0;
                }
                assertTrue(keysOnNodes >= 2, "the domains' keys are spread over the masters");
            }
        } finally {
            for (RedisServer n : nodes) {
                n.close();
            }
        }
    }

    @Test
    void redisKilledMidRunEachFailurePolicyKeepsAnsweringAndSharingResumes() throws Exception {
        for (String policy : new String[] {"local", "open", "closed"}) {
            try (RedisServer redis = RedisServer.start(dir);
                 RunningSluice s = sluice("redis", redis.uri(), "limits.default.queries", "3",
                         "redis-failure", policy, "redis-timeout", "50ms")) {
                String domain = "policy-" + policy + ".com";
                assertEquals(2, Dns.burst(List.of(s.address()), Dns.names(domain, 2))[Rcode.NOERROR]);
                redis.kill();
                long start = System.nanoTime();
                int[] r = Dns.burst(List.of(s.address()), Dns.names(domain, 6));
                assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(3), "no query waits on a dead Redis");
                switch (policy) {
                    // the in-process limiter goes on from the last word Redis gave: 2 of 3 spent
                    case "local" -> assertEquals(1, r[Rcode.NOERROR], "the rest of the limit of 3: " + rcodes(r));
                    case "open" -> assertEquals(6, r[Rcode.NOERROR], rcodes(r));
                    default -> assertEquals(6, r[Rcode.REFUSED], rcodes(r));
                }

                redis.start(); // the same port, empty
                clock.advanceMillis(HOUR_MS);
                String key = key(domain, "fixed-window");
                Await.until("Lettuce to reconnect", Duration.ofSeconds(15), () -> s.sluice().metricsText().lines()
                        .anyMatch(l -> l.matches("sluice_redis_up 1(\\.0)?")));
                Dns.burst(List.of(s.address()), Dns.names(domain, 1));
                assertNotNull(redis.command("GET " + key));
                assertTrue(!redis.command("GET " + key).equals("$-1"), "sharing resumed after Redis came back");
            }
        }
    }

    @Test
    void aRedisThatStopsAnsweringCostsAQueryNoMoreThanTheTimeout() throws Exception {
        try (RedisServer redis = RedisServer.start(dir);
             RunningSluice s = sluice("redis", redis.uri(), "limits.default.queries", "100",
                     "redis-failure", "open", "redis-timeout", "100ms")) {
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(1, "a.paused.com.", Type.A))));
            redis.pause(true); // the connection stays up; calls get no answer
            try {
                for (int i = 0; i < 3; i++) {
                    long start = System.nanoTime();
                    byte[] r = Dns.udp(s.address(), Dns.query(2 + i, "b.paused.com.", Type.A), 2000);
                    long ms = (System.nanoTime() - start) / 1_000_000;
                    assertNotNull(r, "answered while Redis is paused");
                    assertEquals(Rcode.NOERROR, Dns.rcode(r), "--redis-failure open");
                    assertTrue(ms < 1000, "waited " + ms + " ms on a 100 ms timeout");
                }
            } finally {
                redis.pause(false);
            }
        }
    }

    @Test
    void stoppingLetsAQueryParkedOnRedisFinish() throws Exception {
        try (RedisServer redis = RedisServer.start(dir)) {
            RunningSluice s = sluice("redis", redis.uri(), "limits.default.queries", "100",
                    "redis-failure", "open", "redis-timeout", "300ms");
            try (DatagramSocket client = new DatagramSocket()) {
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(1, "a.drain.com.", Type.A))));
                redis.pause(true);
                long read = s.sluice().metrics().count("queries", "protocol", "udp");
                byte[] q = Dns.query(0x4242, "b.drain.com.", Type.A);
                client.send(new DatagramPacket(q, q.length, s.address()));
                // Once read, the query is parked on its unanswered call in the loop's burst, before the loop sees a stop.
                Await.until("the query read", () -> s.sluice().metrics().count("queries", "protocol", "udp") > read);
                s.close(); // returns once nothing is in flight
                client.setSoTimeout(2000);
                byte[] buf = new byte[512];
                client.receive(new DatagramPacket(buf, buf.length));
                assertEquals(0x4242, Dns.id(buf), "the parked query was answered before the stop completed");
                assertEquals(Rcode.NOERROR, Dns.rcode(buf));
            } finally {
                redis.pause(false);
            }
        }
    }

    @Test
    void asyncModeLearnsTheFleetCountWithinASyncInterval() throws Exception {
        try (RedisServer redis = RedisServer.start(dir);
             RunningSluice a = sluice("redis", redis.uri(), "redis-mode", "async", "sync-interval", "20ms",
                     "limits.default.queries", "20");
             RunningSluice b = sluice("redis", redis.uri(), "redis-mode", "async", "sync-interval", "20ms",
                     "limits.default.queries", "20")) {
            assertEquals(20, Dns.burst(List.of(a.address()), Dns.names("fleet.com", 25))[Rcode.NOERROR], "decided locally");
            awaitCount(redis, "fleet.com", 20); // a's count reached Redis
            // b has not seen the domain: it allows, then syncs and learns the fleet's 21.
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(b.address(), Dns.query(1, "x.fleet.com.", Type.A))));
            awaitCount(redis, "fleet.com", 21);
            awaitPasses(b, 1); // the merge follows the push in the same pass
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.udp(b.address(), Dns.query(2, "y.fleet.com.", Type.A))),
                    "b decides on the fleet's count");
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.udp(a.address(), Dns.query(3, "z.fleet.com.", Type.A))));
        }
    }

    @Test
    void asyncModeHoldsBackADomainFarFromItsBudget() throws Exception {
        try (RedisServer redis = RedisServer.start(dir);
             RunningSluice a = sluice("redis", redis.uri(), "redis-mode", "async", "sync-interval", "20ms",
                     "limits.default.queries", "6400")) {
            // Every command logged with its arguments: a key set in a window's last milliseconds
            // expires in as many, too soon to be read back.
            redis.command("CONFIG SET slowlog-max-len 100000");
            redis.command("CONFIG SET slowlog-log-slower-than 0");
            assertEquals(50, Dns.burst(List.of(a.address()), Dns.names("quiet.com", 50))[Rcode.NOERROR]);
            assertEquals(20, Dns.burst(List.of(a.address()), Dns.names("small.com", 20))[Rcode.NOERROR]);
            assertEquals(20, Dns.burst(List.of(a.address()), Dns.names("late.com", 20))[Rcode.NOERROR]);
            awaitPasses(a, 10);
            assertEquals(List.of(), pushed(redis, "quiet.com"), "50 is under 6400 / 64 (64, a power of two): held back");

            assertEquals(14, Dns.burst(List.of(a.address()), Dns.names("quiet.com", 14))[Rcode.NOERROR]);
            awaitCount(redis, "quiet.com", 64); // the loop that counted the 64th queued it: pushed
            clock.advanceMillis(HOUR_MS / 2); // the tests' clock starts on the hour: to the window's middle
            awaitPasses(a, 64); // a held domain is looked at again within 63 passes
            assertEquals(List.of(), pushed(redis, "small.com"), "half a window: still held back");

            clock.advanceMillis(HOUR_MS - 10 - clock.epochNanos() / 1_000_000 % HOUR_MS); // the window's last interval
            awaitPasses(a, 64); // looked at: the counts are taken from the loops, and still held
            assertEquals(44, Dns.burst(List.of(a.address()), Dns.names("late.com", 44))[Rcode.NOERROR]);
            Await.until("late.com pushed", () -> !pushed(redis, "late.com").isEmpty());
            assertEquals(List.of(64L), pushed(redis, "late.com"), "20 taken and 44 with the loops: the share, pushed");

            clock.advanceMillis(20); // the window is over
            awaitPasses(a, 10);
            assertEquals(64, Dns.burst(List.of(a.address()), Dns.names("small.com", 64))[Rcode.NOERROR]);
            awaitCount(redis, "small.com", 64);
            assertEquals(List.of(64L), pushed(redis, "small.com"),
                    "under its share at its window's end: never pushed; the new window's share is, alone");
        }
    }

    /**
     * The counts Redis was asked to set for {@code domain}'s fixed-window word, oldest first, from
     * the slow log (every command, with the test's settings; it shows 32 arguments of a command,
     * five domains' worth of a push).
     */
    private static List<Long> pushed(RedisServer redis, String domain) {
        List<String> lines;
        try {
            lines = List.of(RedisServer.cli("-p", String.valueOf(redis.port()), "SLOWLOG", "GET", "100000").split("\n"));
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException("redis-cli SLOWLOG GET failed", e);
        }
        List<Long> counts = new ArrayList<>();
        String key = key(domain, "fixed-window");
        for (int i = 0; i + 2 < lines.size(); i++) { // redis-cli's raw output: a line a value
            if (!lines.get(i).strip().equalsIgnoreCase("evalsha")) {
                continue;
            }
            int keys = Integer.parseInt(lines.get(i + 2).strip()); // EVALSHA sha keys key... then 4 values a key
            for (int k = 0; k < keys && i + 3 + k < lines.size(); k++) {
                int word = i + 3 + keys + 4 * k + 2; // expected, whether idle, the word set, its ttl
                if (lines.get(i + 3 + k).strip().equals(key) && word < lines.size()) {
                    counts.add(0, Long.parseLong(lines.get(word).strip()) & 0xFFFFFFFFL); // the log is newest first
                }
            }
        }
        return counts;
    }

    @Test
    void countsHeldBackOutliveTheJanitor() throws Exception {
        try (RedisServer redis = RedisServer.start(dir);
             RunningSluice a = sluice("redis", redis.uri(), "redis-mode", "async", "sync-interval", "20ms",
                     "limits.default.queries", "6400", "limits.algorithm", "token-bucket",
                     "limits.janitor-interval", "20ms")) {
            assertEquals(50, Dns.burst(List.of(a.address()), Dns.names("drip.net", 50))[Rcode.NOERROR]);
            awaitPasses(a, 10); // and as many janitor passes, at the same interval
            String key = key("drip.net", "token-bucket");
            assertEquals("$-1", redis.command("GET " + key), "held back: 50 is under 6400 / 64, the bucket not full");
            // Full again, by its word alone the slot is idle: its held counts are pushed then, not
            // held out of the janitor's reach, and not lost to it.
            clock.advanceMillis(60_000);
            Await.until("the held counts in Redis, not the janitor's bin",
                    () -> !redis.command("GET " + key).equals("$-1"));
        }
    }

    private static String rcodes(int[] r) {
        return "NOERROR " + r[Rcode.NOERROR] + ", REFUSED " + r[Rcode.REFUSED] + ", SERVFAIL " + r[Rcode.SERVFAIL];
    }
}
