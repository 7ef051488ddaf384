package io.sluice.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.config.LimitSettings.Algorithm;
import io.sluice.domain.DomainKey;
import io.sluice.domain.DomainProbe;
import io.sluice.domain.RegistrableDomains;
import io.sluice.flood.Floods;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The limiter's decisions, with time moved by hand. */
class DomainLimiterTest {
    private static final RegistrableDomains PSL = RegistrableDomains.fromGuava();
    private final ManualClock clock = new ManualClock();

    private DomainLimiter limiter(Algorithm a, long limit, Map<DomainKey, Policy> overrides, int maxDomains) {
        return new DomainLimiter(a, Policy.of(limit, Duration.ofSeconds(1), 0), overrides, maxDomains, clock);
    }

    private static DomainProbe probe(String name) {
        DomainProbe p = new DomainProbe();
        PSL.reduce(name, p);
        return p;
    }

    private static String refusalText(DomainLimiter l, int slot, DomainProbe p) {
        byte[] out = new byte[DomainLimiter.MAX_REFUSAL_TEXT];
        return new String(out, 0, l.refusalText(slot, p.bytes(), p.length(), out), StandardCharsets.US_ASCII);
    }

    private static int allowed(DomainLimiter l, String name, int tries) {
        DomainProbe p = probe(name);
        int n = 0;
        for (int i = 0; i < tries; i++) {
            if (Decide.allowed(l, p)) {
                n++;
            }
        }
        return n;
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void exactlyTheLimitPerWindowOnOneThread(Algorithm a) {
        DomainLimiter l = limiter(a, 10, Map.of(), 1000);
        assertEquals(10, allowed(l, "www.example.com", 25));
        clock.advanceMillis(2000); // two windows later: a fresh budget whatever the algorithm
        assertEquals(10, allowed(l, "www.example.com", 25));
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void exactlyTheLimitUnderEightThreadsHammeringOneDomain(Algorithm a) throws Exception {
        int limit = 5000;
        DomainLimiter l = limiter(a, limit, Map.of(), 1000);
        AtomicInteger allowed = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        Thread[] threads = new Thread[8];
        for (int t = 0; t < threads.length; t++) {
            threads[t] = new Thread(() -> {
                DomainProbe p = probe("x.hot.example");
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < 2000; i++) {
                    if (Decide.allowed(l, p)) {
                        allowed.incrementAndGet();
                    }
                }
            });
            threads[t].start();
        }
        go.countDown();
        for (Thread t : threads) {
            t.join();
        }
        assertEquals(limit, allowed.get(), "16000 tries, no lost and no extra update");
    }

    @Test
    void subdomainsShareABudgetAndOtherDomainsAreUntouched() {
        DomainLimiter l = limiter(Algorithm.FIXED_WINDOW, 3, Map.of(), 1000);
        assertEquals(1, allowed(l, "a.example.co.uk", 1));
        assertEquals(1, allowed(l, "b.c.example.co.uk", 1));
        assertEquals(1, allowed(l, "EXAMPLE.CO.UK", 5));
        assertEquals(0, allowed(l, "www.example.co.uk", 5));
        assertEquals(3, allowed(l, "www.other.co.uk", 5));
        assertEquals(3, allowed(l, "x.b.github.io", 5));
        assertEquals(3, allowed(l, "x.c.github.io", 5), "c.github.io is its own registrable domain");
    }

    @Test
    void overridesAndUnlimitedDomains() {
        DomainLimiter l = limiter(Algorithm.FIXED_WINDOW, 5, Map.of(
                DomainKey.of("example.com"), Policy.of(2, Duration.ofSeconds(1), 0),
                DomainKey.of("trusted.example"), Policy.UNLIMITED,
                DomainKey.of("slow.example"), Policy.of(1, Duration.ofSeconds(10), 0)), 1000);
        assertEquals(2, allowed(l, "www.example.com", 10));
        assertEquals(100, allowed(l, "a.trusted.example", 100));
        assertEquals(5, allowed(l, "other.example", 10));
        assertEquals(1, allowed(l, "slow.example", 10));
        clock.advanceMillis(1000);
        assertEquals(0, allowed(l, "slow.example", 10), "its window is ten seconds");
        assertEquals(2, allowed(l, "www.example.com", 10));
        assertEquals(0, l.tracked() - 3, "unlimited domains are not tracked");
    }

    @Test
    void anUnlimitedDefaultOnlyCountsOverriddenDomains() {
        DomainLimiter l = new DomainLimiter(Algorithm.FIXED_WINDOW, Policy.UNLIMITED,
                Map.of(DomainKey.of("example.com"), Policy.of(1, Duration.ofSeconds(1), 0)), 1000, clock);
        assertEquals(1, allowed(l, "a.example.com", 5));
        assertEquals(5, allowed(l, "a.example.net", 5));
        assertEquals(1, l.tracked());
    }

    @Test
    void refusalsNameTheDomainAndTheLimit() {
        DomainLimiter l = limiter(Algorithm.FIXED_WINDOW, 1, Map.of(), 1000);
        DomainProbe p = probe("www.example.com");
        assertTrue(Decide.allowed(l, p));
        int c = Decide.refusedBy(l, p);
        assertNotEquals(DomainLimiter.NONE, c);
        assertEquals("sluice: example.com over 1 queries per 1s", refusalText(l, c, p));
    }

    @Test
    void fixedWindowsStartOnMultiplesOfTheWindowSinceTheEpoch() {
        DomainLimiter l = limiter(Algorithm.FIXED_WINDOW, 2, Map.of(), 1000);
        clock.advanceMillis(900);
        assertEquals(2, allowed(l, "edge.example", 5));
        clock.advanceMillis(100); // the next whole second: a new window, though only 100 ms passed
        assertEquals(2, allowed(l, "edge.example", 5));
    }

    @Test
    void slidingWindowRemovesTheBurstAtAWindowEdge() {
        DomainLimiter fixed = limiter(Algorithm.FIXED_WINDOW, 10, Map.of(), 1000);
        DomainLimiter sliding = limiter(Algorithm.SLIDING_WINDOW, 10, Map.of(), 1000);
        clock.advanceMillis(900);
        assertEquals(10, allowed(fixed, "a.example", 10));
        assertEquals(10, allowed(sliding, "a.example", 10));
        clock.advanceMillis(200); // 1.1 s: 90% of the last window still counts for the sliding one
        assertEquals(10, allowed(fixed, "a.example", 20), "the fixed window lets 20 through in 200 ms");
        assertEquals(1, allowed(sliding, "a.example", 20), "10 * 0.9 = 9 still counted: one more");
        clock.advanceMillis(500); // 1.6 s: 40% of 10 plus the 1 of this window
        assertEquals(5, allowed(sliding, "a.example", 20));
    }

    @Test
    void tokenBucketRefillsAtTheRateAndHoldsTheBurst() {
        DomainLimiter l = new DomainLimiter(Algorithm.TOKEN_BUCKET, Policy.of(10, Duration.ofSeconds(1), 20),
                Map.of(), 1000, clock);
        assertEquals(20, allowed(l, "tb.example", 50), "the full bucket");
        clock.advanceMillis(500);
        assertEquals(5, allowed(l, "tb.example", 50), "10 per second refilled for half a second");
        clock.advanceMillis(10_000);
        assertEquals(20, allowed(l, "tb.example", 50), "never more than the capacity");
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void theJanitorEmptiesTheTableOnceTheWindowsEnd(Algorithm a) {
        DomainLimiter l = limiter(a, 10, Map.of(), 1000);
        for (int i = 0; i < 100; i++) {
            allowed(l, "d" + i + ".example", 1);
        }
        assertEquals(100, l.tracked());
        assertEquals(0, l.evictIdle(), "every window still open");
        clock.advanceMillis(2000);
        assertEquals(100, l.evictIdle());
        assertEquals(0, l.tracked());
        assertEquals(1, allowed(l, "d1.example", 1), "a retired domain starts again");
    }

    @Test
    void aCounterRetiredWhileInUseIsNeverUpdated() {
        DomainLimiter l = limiter(Algorithm.FIXED_WINDOW, 2, Map.of(), 1000);
        assertEquals(1, allowed(l, "r.example", 1));
        clock.advanceMillis(1000);
        l.evictIdle();
        assertEquals(2, allowed(l, "r.example", 5), "a fresh counter with the whole budget");
        assertEquals(1, l.tracked());
    }

    @Test
    void aFloodOfRandomDomainsStaysBoundedAndSharesOneOverflowBudget() {
        int max = 1000;
        DomainLimiter l = limiter(Algorithm.FIXED_WINDOW, 100, Map.of(), max);
        ThreadLocalRandom r = ThreadLocalRandom.current();
        DomainProbe p = new DomainProbe();
        int allowed = 0;
        for (int i = 0; i < 200_000; i++) {
            PSL.reduce("www.r" + Long.toHexString(r.nextLong()) + ".com", p);
            if (Decide.allowed(l, p)) {
                allowed++;
            }
        }
        assertTrue(l.tracked() <= max, "tracked " + l.tracked());
        assertEquals(max + 100, allowed, "each tracked domain once, then the overflow counter's 100");
        assertTrue(l.overflowHits.sum() > 190_000);
        clock.advanceMillis(1000);
        assertEquals(max, l.evictIdle());
        assertEquals(0, l.tracked());
    }

    @Test
    void aDomainAskedAgainEarnsACounterInATableFullOfDomainsAskedOnce() {
        int max = 1000;
        DomainLimiter l = limiter(Algorithm.FIXED_WINDOW, 100, Map.of(), max);
        java.util.Random r = new java.util.Random(18);
        DomainProbe p = new DomainProbe();
        for (int i = 0; i < 2_000; i++) { // twice the table
            PSL.reduce("www.r" + Long.toHexString(r.nextLong()) + ".com", p);
            Decide.refusedBy(l, p);
        }
        // the first nine tenths, and the doorkeeper's false positives (a few percent) of the rest
        assertTrue(l.tracked() >= 900 && l.tracked() < max, "tracked " + l.tracked());
        PSL.reduce("www.regular.example", p);
        int asked = 0;
        while (l.existing(p) == DomainLimiter.NONE && asked < 3) {
            Decide.refusedBy(l, p);
            asked++;
        }
        assertTrue(l.existing(p) != DomainLimiter.NONE, "a counter of its own within three queries");
        // its second query earns it, or its first by a false positive (the probe's hash seed is the JVM's own)
        assertTrue(asked <= 2, "queries before its counter: " + asked);
    }

    /**
     * A flooded domain's counter outlives a pause in the attack: retired, its next burst would get
     * a whole budget for its first window before being judged again.
     */
    @Test
    void aFloodedCounterIsKeptThroughAPauseAndRetiredOnceTheFloodIsOver() {
        DomainLimiter l = limiter(Algorithm.FIXED_WINDOW, 100, Map.of(), 1000);
        Floods floods = Floods.watch(l, new io.sluice.config.LimitSettings.Flood(true, 0.5, 20, 0.1, 0.5, java.util.List.of()));
        DomainProbe p = probe("x1.victim.example");
        int c = l.counterFor(p);
        for (int i = 0; i < 100; i++) {
            Decide.allowed(l, p);
            floods.answered(l, c, p::toString, true);
        }
        clock.advanceMillis(1000);
        floods.answered(l, c, p::toString, true); // judges the window before: flooded
        assertTrue(l.flooded(c));
        clock.advanceMillis(3000); // the attack pauses: three windows without a query
        assertEquals(0, l.evictIdle(), "kept: the flood may resume");
        assertEquals(10, l.budget(c).queries(), "and resumes cut");
        clock.advanceMillis(9000); // past eight quiet windows: over
        assertEquals(1, l.evictIdle());
    }
}
