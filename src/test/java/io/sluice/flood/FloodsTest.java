package io.sluice.flood;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.config.LimitSettings;
import io.sluice.domain.DomainProbe;
import io.sluice.domain.RegistrableDomains;
import io.sluice.limit.DomainLimiter;
import io.sluice.limit.ManualClock;
import io.sluice.limit.Policy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** How a domain's windows are judged, and what its budget is while it is flooded, with time moved by hand. */
class FloodsTest {
    private static final RegistrableDomains PSL = RegistrableDomains.fromGuava();
    private final ManualClock clock = new ManualClock();

    @Test
    void aFloodThatPausesEveryOtherWindowIsStillCut() {
        DomainLimiter l = new DomainLimiter(LimitSettings.Algorithm.FIXED_WINDOW, Policy.of(100, Duration.ofSeconds(1), 0),
                Map.of(), 1000, clock);
        Floods floods = Floods.watch(l, new LimitSettings.Flood(true, 0.5, 20, 0.1, 0.5, List.of()));
        DomainProbe p = new DomainProbe();
        PSL.reduce("x1.victim.example", p);
        int c = l.counterFor(p);
        for (int i = 0; i < 50; i++) {
            assertEquals(Floods.Change.NONE, floods.answered(l, c, p::toString, true));
        }
        clock.advanceMillis(2000); // a window of quiet, then the next burst's first answer
        assertEquals(Floods.Change.ENTERED, floods.answered(l, c, p::toString, true), "judged on the window it ran");
        assertEquals(10, l.budget(c).queries());
        assertEquals("sluice: victim.example over 10 queries per 1s (cut: a random-subdomain flood)", refusalText(l, c, p));
        clock.advanceMillis(9000); // nine windows of quiet: over
        assertEquals(Floods.Change.LEFT, floods.answered(l, c, p::toString, true));
        assertEquals(100, l.budget(c).queries());
        assertEquals("sluice: victim.example over 100 queries per 1s", refusalText(l, c, p));
    }

    private static String refusalText(DomainLimiter l, int slot, DomainProbe p) {
        byte[] out = new byte[DomainLimiter.MAX_REFUSAL_TEXT];
        return new String(out, 0, l.refusalText(slot, p.bytes(), p.length(), out), StandardCharsets.US_ASCII);
    }
}
