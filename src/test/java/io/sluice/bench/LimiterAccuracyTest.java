package io.sluice.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.config.LimitSettings;
import org.junit.jupiter.api.Test;

/**
 * The limiter against exact models of its algorithms ({@link LimiterAccuracy}), on 500,000 Zipf
 * queries over 2,000 domains, 50 per second each: a fixed window and a token bucket admit exactly
 * what their definitions do; the sliding window's two counters stay within a percent of a log of
 * times (0.30% over, 0.03% under on this workload: docs/benchmarks.md, "Limiter accuracy").
 */
class LimiterAccuracyTest {
    private static LimiterAccuracy.Result measure(LimitSettings.Algorithm a) {
        return LimiterAccuracy.measure(a, 2_000, 50_000, 10, 50, 42);
    }

    @Test
    void aFixedWindowAdmitsExactlyUpToTheLimitInEachWindow() {
        LimiterAccuracy.Result r = measure(LimitSettings.Algorithm.FIXED_WINDOW);
        assertTrue(r.modelAllowed() < r.queries(), "the workload goes over the limit: " + r);
        assertEquals(0, r.over(), r.toString());
        assertEquals(0, r.under(), r.toString());
    }

    @Test
    void aTokenBucketAdmitsExactlyWhatItsTokensAllow() {
        LimiterAccuracy.Result r = measure(LimitSettings.Algorithm.TOKEN_BUCKET);
        assertTrue(r.modelAllowed() < r.queries(), "the workload goes over the limit: " + r);
        assertEquals(0, r.over(), r.toString());
        assertEquals(0, r.under(), r.toString());
    }

    @Test
    void theSlidingWindowStaysWithinAPercentOfAnExactOne() {
        LimiterAccuracy.Result r = measure(LimitSettings.Algorithm.SLIDING_WINDOW);
        assertTrue(r.modelAllowed() < r.queries(), "the workload goes over the limit: " + r);
        assertTrue(r.overShare() < 0.01, r.toString());
        assertTrue(r.underShare() < 0.001, r.toString());
    }
}
