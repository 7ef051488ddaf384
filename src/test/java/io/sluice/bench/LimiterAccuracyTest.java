package io.sluice.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.config.LimitSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

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

    /** A fixed window allows up to the limit in each window, a token bucket what its tokens allow: exactly. */
    @ParameterizedTest
    @EnumSource(names = {"FIXED_WINDOW", "TOKEN_BUCKET"})
    void admitsExactlyWhatItsDefinitionAllows(LimitSettings.Algorithm algorithm) {
        LimiterAccuracy.Result r = measure(algorithm);
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
