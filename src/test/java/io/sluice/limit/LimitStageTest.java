package io.sluice.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.sluice.cache.AnswerCache;
import io.sluice.config.Settings;
import io.sluice.flood.Floods;
import io.sluice.metrics.Registry;
import io.sluice.pipeline.Outcome;
import io.sluice.pipeline.Stage;
import io.sluice.testing.Dns;
import io.sluice.testing.StageHarness;
import io.sluice.testing.TestSettings;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** The limit stage alone, on the stage harness: budgets per registrable domain in time moved by hand. */
class LimitStageTest {
    private final ManualClock clock = new ManualClock();
    private Limits limits;

    @AfterEach
    void close() {
        if (limits != null) {
            limits.close();
        }
    }

    private StageHarness harness(String... keyValues) throws Exception {
        Settings s = TestSettings.of(keyValues);
        limits = Limits.from(s.limits(), clock);
        Registry meters = new Registry();
        LimitMeters limitMeters = new LimitMeters(meters);
        Floods floods = Floods.watch(limits, meters);
        StageHarness h = new StageHarness(clock, loop -> List.<Stage>of(new LimitStage(limits, limitMeters,
                Decisions.local(limits.limiter()), loop, null, floods == null ? null : floods.watcher(limits, limitMeters))));
        for (String name : List.of("www.example.com.", "mail.example.com.", "www.example.org.")) {
            h.record(Dns.answer(name, 300));
        }
        return h;
    }


    @Test
    void aDomainOverItsBudgetIsRefusedNeverForwardedAndItsSubdomainsCountTogether() throws Exception {
        StageHarness h = harness("limits.default.queries", "2", "limits.default.window", "1s");
        assertEquals(Rcode.NOERROR, Dns.rcode(h.ask(Dns.query(1, "www.example.com.", Type.A))));
        assertEquals(Rcode.NOERROR, Dns.rcode(h.ask(Dns.query(2, "mail.example.com.", Type.A))));
        assertEquals(Rcode.REFUSED, Dns.rcode(h.ask(Dns.query(3, "www.example.com.", Type.A))), "example.com's third");
        assertEquals(Rcode.NOERROR, Dns.rcode(h.ask(Dns.query(4, "www.example.org.", Type.A))), "another domain's own budget");
        assertEquals(3, h.upstreamQueries(), "the refused query never reached the upstream");
        clock.advanceMillis(1000);
        assertEquals(Rcode.NOERROR, Dns.rcode(h.ask(Dns.query(5, "www.example.com.", Type.A))), "a new window");
        assertEquals(0, h.internalErrors());
    }

    @Test
    void theActionSaysWhatAQueryOverBudgetGets() throws Exception {
        StageHarness h = harness("limits.default.queries", "1", "limits.default.window", "1h", "action", "drop");
        h.ask(Dns.query(1, "www.example.com.", Type.A));
        assertNull(h.ask(Dns.query(2, "www.example.com.", Type.A)), "dropped: no answer");
        assertEquals(Outcome.DROPPED, h.lastOutcome());
        assertEquals(1, h.upstreamQueries());
    }

    @Test
    void aDryRunAndAnExemptClientPassEveryQuery() throws Exception {
        StageHarness dry = harness("limits.default.queries", "1", "limits.default.window", "1h", "dry-run", "true");
        for (int id = 1; id <= 3; id++) {
            assertEquals(Rcode.NOERROR, Dns.rcode(dry.ask(Dns.query(id, "www.example.com.", Type.A))));
        }
        assertEquals(3, dry.upstreamQueries());
        limits.close();
        StageHarness exempt = harness("limits.default.queries", "1", "limits.default.window", "1h",
                "limits.exempt-clients", "127.0.0.0/8");
        for (int id = 1; id <= 3; id++) {
            assertEquals(Rcode.NOERROR, Dns.rcode(exempt.ask(Dns.query(id, "www.example.com.", Type.A))));
        }
        assertEquals(3, exempt.upstreamQueries(), "127.0.0.1 is never limited");
    }

    /**
     * The flood watch is the limit stage's way back: the upstream's NXDOMAINs, seen on the answer
     * side, cut a domain whose misses press on its budget, and spare one far under it.
     */
    @Test
    void nxdomainsSeenOnTheWayBackCutAFloodPressingOnItsBudgetAndSpareOneUnderIt() throws Exception {
        StageHarness h = harness("limits.default.queries", "100", "limits.default.window", "1s");
        h.nxdomainUnder("victim.com.").nxdomainUnder("dnsbl.example.");
        int id = 1;
        for (int i = 0; i < 100; i++) {
            assertEquals(Rcode.NXDOMAIN, Dns.rcode(h.ask(Dns.query(id++, "r" + i + ".victim.com.", Type.A))));
        }
        for (int i = 0; i < 50; i++) { // a DNSBL's lookups: all NXDOMAIN, half its budget
            assertEquals(Rcode.NXDOMAIN, Dns.rcode(h.ask(Dns.query(id++, i + ".4.3.2.dnsbl.example.", Type.A))));
        }
        clock.advanceMillis(1000); // the next window's first answer judges this one
        int refusedVictim = 0;
        int refusedDnsbl = 0;
        for (int i = 0; i < 30; i++) {
            refusedVictim += Dns.rcode(h.ask(Dns.query(id++, "s" + i + ".victim.com.", Type.A))) == Rcode.REFUSED ? 1 : 0;
            refusedDnsbl += Dns.rcode(h.ask(Dns.query(id++, i + ".5.3.2.dnsbl.example.", Type.A))) == Rcode.REFUSED ? 1 : 0;
        }
        assertEquals(20, refusedVictim, "cut to a tenth of 100: 10 of 30 pass");
        assertEquals(0, refusedDnsbl, "50 misses of a budget of 100 buy the upstream nothing when cut");
        assertEquals(0, h.internalErrors());
    }

    /**
     * Over its budget, a query's refusal goes back through the stages before the limits: the cache
     * puts the stale answer it still holds in its place, and only a name it lacks is refused, and
     * counted as limited. A drop (no answer at all) is replaced alike.
     */
    @Test
    void aQueryOverItsBudgetGetsTheStaleAnswerAStageBeforeHolds() throws Exception {
        for (String action : new String[] {"refused", "drop"}) {
            Settings s = TestSettings.of("limits.default.queries", "1", "limits.default.window", "1h", "cache.size",
                    "1000", "action", action);
            if (limits != null) {
                limits.close(); // the last loop's
            }
            limits = Limits.from(s.limits(), clock);
            AnswerCache cache = new AnswerCache(s.cache(), 1, clock::epochNanos, s.maxUdpSize(), new Registry());
            Registry meters = new Registry();
            StageHarness h = new StageHarness(clock, loop -> List.<Stage>of(cache.stage(), new LimitStage(limits,
                    new LimitMeters(meters), Decisions.local(limits.limiter()), loop, null, null)));
            h.record(Dns.answer("www.example.com.", 300));
            assertEquals(Rcode.NOERROR, Dns.rcode(h.ask(Dns.query(1, "www.example.com.", Type.A))), "the budget's one query");
            clock.advanceMillis(301_000); // past the TTL, within stale-ttl and the hour's window
            Message stale = Dns.parse(h.ask(Dns.query(2, "www.example.com.", Type.A)));
            assertEquals(Rcode.NOERROR, stale.getRcode(), action);
            assertEquals(1, stale.getSection(Section.ANSWER).size(), "the stale answer, not a refusal: " + action);
            assertEquals(0, meters.count("limited", "action", action), "a stale answer refuses no client");
            byte[] refused = h.ask(Dns.query(3, "mail.example.com.", Type.A));
            if (action.equals("drop")) {
                assertNull(refused, "nothing cached for it: dropped");
            } else {
                assertEquals(Rcode.REFUSED, Dns.rcode(refused), "nothing cached for it");
            }
            assertEquals(1, meters.count("limited", "action", action));
            assertEquals(1, h.upstreamQueries());
            assertEquals(0, h.internalErrors());
        }
    }
}
