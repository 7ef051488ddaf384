package io.sluice.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.sluice.config.Settings;
import io.sluice.limit.ManualClock;
import io.sluice.metrics.Registry;
import io.sluice.testing.Dns;
import io.sluice.testing.StageHarness;
import io.sluice.testing.TestSettings;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Message;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** The cache stage alone, on the stage harness: it answers, stores and ages answers in time moved by hand. */
class CacheStageTest {
    private final ManualClock clock = new ManualClock();

    private StageHarness harness(String... keyValues) throws Exception {
        Settings s = TestSettings.of(keyValues);
        AnswerCache cache = new AnswerCache(s.cache(), 1, clock::epochNanos, s.maxUdpSize(), new Registry());
        CacheStage stage = cache.stage();
        return new StageHarness(clock, stage).record(Dns.answer("www.example.com.", 300));
    }


    @Test
    void theSecondAskIsAnsweredFromTheCacheWithItsIdAndTheTtlAged() throws Exception {
        StageHarness h = harness("cache.size", "1000");
        Message first = Dns.parse(h.ask(Dns.query(1, "www.example.com.", Type.A)));
        assertEquals(300, first.getSection(Section.ANSWER).get(0).getTTL());
        clock.advanceMillis(100_000);
        byte[] second = h.ask(Dns.query(2, "WWW.example.com.", Type.A));
        assertNotNull(second, "answered at once");
        Message m = Dns.parse(second);
        assertEquals(1, h.upstreamQueries(), "from the cache");
        assertEquals(2, m.getHeader().getID());
        assertEquals("WWW.example.com.", m.getQuestion().getName().toString(), "the client's case");
        assertEquals(200, m.getSection(Section.ANSWER).get(0).getTTL(), "100 s of its 300 gone");
        assertEquals(first.getSection(Section.ANSWER).get(0).rdataToString(),
                m.getSection(Section.ANSWER).get(0).rdataToString());
    }

    @Test
    void anAnswerPastItsTtlIsAskedForAgain() throws Exception {
        StageHarness h = harness("cache.size", "1000");
        h.ask(Dns.query(1, "www.example.com.", Type.A));
        clock.advanceMillis(301_000);
        Message m = Dns.parse(h.ask(Dns.query(2, "www.example.com.", Type.A)));
        assertEquals(2, h.upstreamQueries());
        assertEquals(300, m.getSection(Section.ANSWER).get(0).getTTL(), "the upstream's fresh answer");
    }
}
