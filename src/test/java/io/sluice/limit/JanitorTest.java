package io.sluice.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.sluice.config.LimitSettings.Algorithm;
import io.sluice.domain.DomainProbe;
import io.sluice.domain.RegistrableDomains;
import io.sluice.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The janitor's thread: eviction, and one log line per change, never one per query. */
class JanitorTest {
    private static final RegistrableDomains PSL = RegistrableDomains.fromGuava();
    private final ManualClock clock = new ManualClock();
    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();
    private final Logger limitLog = (Logger) LoggerFactory.getLogger("io.sluice.limit"); // Janitor, RefusalLog

    @BeforeEach
    void capture() {
        logged.start();
        limitLog.addAppender(logged);
    }

    @AfterEach
    void release() {
        limitLog.detachAppender(logged);
    }

    /** The lines logged so far: read under the appender's lock, which its appends hold (AppenderBase.doAppend). */
    private List<String> lines(Predicate<String> which) {
        synchronized (logged) {
            return logged.list.stream().map(ILoggingEvent::getFormattedMessage).filter(which).toList();
        }
    }

    /** Waits for the janitor's thread to have logged {@code count} matching lines (at most 5 s). */
    private void awaitLines(String part, int count) {
        Await.until(count + " lines with " + part, Duration.ofSeconds(5), () -> lines(l -> l.contains(part)).size() >= count);
    }

    @Test
    void overflowIsLoggedOnceWhenItStartsAndOnceWhenItEnds() throws Exception {
        DomainLimiter limiter = new DomainLimiter(Algorithm.FIXED_WINDOW, Policy.of(5, Duration.ofSeconds(1), 0),
                Map.of(), 10, clock);
        try (Janitor janitor = new Janitor(limiter, null, () -> false, 10)) {
            janitor.start(Duration.ofMillis(20));
            DomainProbe p = new DomainProbe();
            for (int i = 0; i < 1000; i++) {
                PSL.reduce("www.flood" + i + ".example", p);
                Decide.refusedBy(limiter, p);
            }
            // nine tenths by the first nine domains, the last tenth only by a domain seen before
            // (each is asked once here: a false positive of the doorkeeper, or nothing)
            assertTrue(limiter.tracked() >= 9 && limiter.tracked() <= 10, "tracked " + limiter.tracked());
            awaitLines("counter table full", 1);
            clock.advanceMillis(1000); // every window ends: the next sweep empties the table
            awaitLines("overflow ended", 1);
            assertEquals(1, lines(l -> l.contains("counter table full")).size());
            assertEquals(1, lines(l -> l.contains("overflow ended")).size());
            assertEquals(0, limiter.tracked());
            List<String> refusals = lines(l -> l.startsWith("limiting"));
            assertTrue(refusals.size() <= 2, "one line for the overflow counter, not one per query: " + refusals);
        }
    }

    @Test
    void refusalsAreLoggedOncePerDomainPerWindow() throws Exception {
        DomainLimiter limiter = new DomainLimiter(Algorithm.FIXED_WINDOW, Policy.of(1, Duration.ofSeconds(1), 0),
                Map.of(), 100, clock);
        try (Janitor janitor = new Janitor(limiter, null, () -> true, 100)) {
            janitor.start(Duration.ofSeconds(5));
            DomainProbe p = new DomainProbe();
            PSL.reduce("a.example.com", p);
            for (int i = 0; i < 50; i++) {
                Decide.refusedBy(limiter, p);
            }
            awaitLines("example.com", 1);
            clock.advanceMillis(1000);
            for (int i = 0; i < 50; i++) {
                Decide.refusedBy(limiter, p);
            }
            awaitLines("example.com", 2);
            assertEquals(List.of("dry run, would refuse example.com: over 1 queries per 1s",
                    "dry run, would refuse example.com: over 1 queries per 1s"), lines(l -> l.contains("example.com")));
        }
    }

    /** Asks for each of {@code count} domains named {@code prefix}N twice (so the table's last tenth takes them too). */
    private static void askTwice(DomainLimiter limiter, String prefix, int count) {
        DomainProbe p = new DomainProbe();
        for (int i = 0; i < 2 * count; i++) {
            PSL.reduce(prefix + i % count + ".example", p);
            Decide.refusedBy(limiter, p);
        }
    }

    @Test
    void theRoomAPassRetiresComesBackAGraceLaterNotAPassLater() throws Exception {
        int max = 100;
        DomainLimiter limiter = new DomainLimiter(Algorithm.FIXED_WINDOW, Policy.of(5, Duration.ofSeconds(1), 0),
                Map.of(), max, clock);
        askTwice(limiter, "old", max);
        assertEquals(max, limiter.tracked());
        clock.advanceMillis(1000); // every window ends
        try (Janitor janitor = new Janitor(limiter, null, () -> false, max)) {
            janitor.start(Duration.ofSeconds(3));
            Await.until("the first pass to retire them all", Duration.ofSeconds(4), () -> limiter.tracked() == 0);
            long retiredAt = System.nanoTime();
            // The retired slots hold their room for a grace: the table, half as large again as its
            // bound, has room for half the bound until then, and for the whole bound after it.
            Await.until("a whole bound of new domains counted", Duration.ofSeconds(4), () -> {
                askTwice(limiter, "new", max);
                return limiter.tracked() >= max;
            });
            long waited = (System.nanoTime() - retiredAt) / 1_000_000;
            assertEquals(max, limiter.tracked(), "a whole bound of new domains has counters " + waited + " ms after the pass");
            assertTrue(waited < 2000, "room came back after " + waited + " ms, before the next pass (3 s)");
        }
    }
}
