package io.sluice.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.limit.ManualClock;
import io.sluice.testing.Dns;
import io.sluice.testing.RedisServer;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.file.Path;
import java.util.ArrayList;
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

    /** Sends all queries at once (round robin over the targets), then counts the rcodes of the replies. */
    private static int[] burst(List<InetSocketAddress> targets, List<String> names) throws Exception {
        int[] rcodes = new int[24];
        List<DatagramChannel> chans = new ArrayList<>();
        try {
            for (InetSocketAddress t : targets) {
                DatagramChannel c = DatagramChannel.open(StandardProtocolFamily.INET);
                c.setOption(StandardSocketOptions.SO_RCVBUF, 1 << 20);
                c.configureBlocking(false);
                c.connect(t);
                chans.add(c);
            }
            for (int i = 0; i < names.size(); i++) {
                chans.get(i % chans.size()).write(ByteBuffer.wrap(Dns.query(i, names.get(i), Type.A)));
            }
            int got = 0;
            ByteBuffer buf = ByteBuffer.allocate(4096);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (got < names.size() && System.nanoTime() < deadline) {
                boolean any = false;
                for (DatagramChannel c : chans) {
                    buf.clear();
                    if (c.read(buf) > 0) {
                        rcodes[buf.get(3) & 0x0F]++;
                        got++;
                        any = true;
                    }
                }
                if (!any) {
                    Thread.sleep(1);
                }
            }
            assertEquals(names.size(), got, "every query answered");
            return rcodes;
        } finally {
            for (DatagramChannel c : chans) {
                c.close();
            }
        }
    }

    private static List<String> names(String domain, int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add("h" + i + "." + domain + ".");
        }
        return out;
    }

    @Test
    void twoInstancesOnOneRedisHandOutExactlyTheLimitPerWindow() throws Exception {
        try (RedisServer redis = RedisServer.start(dir);
             RunningSluice a = sluice("redis", redis.uri(), "limits.default.queries", "10");
             RunningSluice b = sluice("redis", redis.uri(), "limits.default.queries", "10")) {
            List<InetSocketAddress> both = List.of(a.address(), b.address());
            int[] r = burst(both, names("shared.com", 60));
            assertEquals(10, r[Rcode.NOERROR], "exactly the limit between the two");
            assertEquals(50, r[Rcode.REFUSED]);
            r = burst(both, names("shared.com", 20));
            assertEquals(0, r[Rcode.NOERROR], "still the same window");

            long window = clock.epochNanos() / TimeUnit.HOURS.toNanos(1);
            String key = "sluice:{shared.com}:" + window;
            assertEquals("10", redis.command("GET " + key), "only allowed queries are counted");
            long ttl = Long.parseLong(redis.command("PTTL " + key).substring(1));
            assertTrue(ttl > 0 && ttl <= HOUR_MS, "the key expires after its window: " + ttl);

            clock.advanceMillis(HOUR_MS);
            r = burst(both, names("shared.com", 30));
            assertEquals(10, r[Rcode.NOERROR], "a new window, a new budget");
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
            assertEquals(8, burst(both, names("slide.org", 30))[Rcode.NOERROR]);
            // Half-way through the next window half of the last window's 8 still count.
            clock.advanceMillis(HOUR_MS + HOUR_MS / 2 - clock.epochNanos() / 1_000_000 % HOUR_MS);
            assertEquals(4, burst(both, names("slide.org", 30))[Rcode.NOERROR]);
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
                    all.addAll(names(d, 20));
                }
                int[] r = burst(List.of(a.address(), b.address()), all);
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
                assertEquals(2, burst(List.of(s.address()), names(domain, 2))[Rcode.NOERROR]);
                redis.kill();
                long start = System.nanoTime();
                int[] r = burst(List.of(s.address()), names(domain, 6));
                assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(3), "no query waits on a dead Redis");
                switch (policy) {
                    case "local" -> assertEquals(3, r[Rcode.NOERROR], "the in-process limit of 3: " + rcodes(r));
                    case "open" -> assertEquals(6, r[Rcode.NOERROR], rcodes(r));
                    default -> assertEquals(6, r[Rcode.REFUSED], rcodes(r));
                }

                redis.start(); // the same port, empty
                clock.advanceMillis(HOUR_MS);
                String key = "sluice:{" + domain + "}:" + clock.epochNanos() / TimeUnit.HOURS.toNanos(1);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
                while (redis.command("GET " + key).equals("$-1") && System.nanoTime() < deadline) {
                    burst(List.of(s.address()), names(domain, 1));
                    Thread.sleep(100); // waiting for Lettuce to reconnect, not for a window
                }
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
                byte[] q = Dns.query(0x4242, "b.drain.com.", Type.A);
                client.send(new DatagramPacket(q, q.length, s.address()));
                Thread.sleep(50); // the query is now parked, its call unanswered
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
            assertEquals(20, burst(List.of(a.address()), names("fleet.com", 25))[Rcode.NOERROR], "decided locally");
            String key = "sluice:{fleet.com}:" + clock.epochNanos() / TimeUnit.HOURS.toNanos(1);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!"20".equals(redis.command("GET " + key)) && System.nanoTime() < deadline) {
                Thread.sleep(10); // waiting for the sync thread
            }
            assertEquals("20", redis.command("GET " + key), "a's count reached Redis");
            // b has not seen the domain: it allows, then syncs and learns the fleet's 21.
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(b.address(), Dns.query(1, "x.fleet.com.", Type.A))));
            while (!"21".equals(redis.command("GET " + key)) && System.nanoTime() < deadline) {
                Thread.sleep(10); // waiting for b's sync thread
            }
            assertEquals("21", redis.command("GET " + key));
            Thread.sleep(100); // five sync intervals: the merge follows the push in the same pass
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.udp(b.address(), Dns.query(2, "y.fleet.com.", Type.A))),
                    "b decides on the fleet's count");
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.udp(a.address(), Dns.query(3, "z.fleet.com.", Type.A))));
        }
    }

    private static String rcodes(int[] r) {
        return "NOERROR " + r[Rcode.NOERROR] + ", REFUSED " + r[Rcode.REFUSED] + ", SERVFAIL " + r[Rcode.SERVFAIL];
    }
}
