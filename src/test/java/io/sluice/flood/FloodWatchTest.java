package io.sluice.flood;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.config.ConfigFile;
import io.sluice.config.Settings;
import io.sluice.domain.DomainProbe;
import io.sluice.limit.DomainLimiter;
import io.sluice.limit.LimitMeters;
import io.sluice.limit.Limits;
import io.sluice.limit.ManualClock;
import io.sluice.metrics.Registry;
import io.sluice.pipeline.Answer;
import io.sluice.pipeline.AnswerSide;
import io.sluice.pipeline.Query;
import io.sluice.pipeline.Route;
import io.sluice.testing.Dns;
import io.sluice.wire.QueryView;
import io.sluice.wire.Wire;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xbill.DNS.Type;

/** What the flood watch counts an answer against: the counter the limit stage noted, while it still holds the domain. */
class FloodWatchTest {
    @TempDir
    Path dir;
    private final ManualClock clock = new ManualClock();
    private Limits limits;
    private AnswerSide watch;

    @BeforeEach
    void start() throws Exception {
        Path f = dir.resolve("sluice.yml");
        Files.writeString(f, "limits:\n  default: { queries: 100, window: 1s }\n"
                + "  flood: { detect: true, nxdomain-ratio: 0.5, min-answers: 20, budget: 0.1 }\n");
        Settings.Builder b = new Settings.Builder();
        ConfigFile.apply(f, b);
        b.set("upstreams", List.of("127.0.0.1:53"));
        limits = Limits.from(b.build().limits(), clock);
        watch = watcher();
    }

    @AfterEach
    void stop() {
        limits.close();
    }

    @Test
    void aNotedAnswerCountsForTheNotedCounter() {
        int victim = counter("victim.example");
        long note = limits.limiter().answerNote(victim);
        nxdomains("victim.example", note, 90);
        clock.advanceMillis(1000);
        nxdomains("victim.example", note, 1); // the next window's first answer judges the last
        assertTrue(limits.limiter().flooded(victim));
    }

    @Test
    void aNoteWhoseSlotHoldsAnotherDomainIsNotBelieved() {
        int victim = counter("victim.example");
        int other = counter("other.example");
        assertNotEquals(victim, other);
        // The slot of other.example, with victim.example's fingerprint: what a note looks like once
        // the janitor has emptied victim.example's slot and another domain has taken it.
        long stale = limits.limiter().answerNote(victim) & ~0xffff_ffffL | other;
        nxdomains("victim.example", stale, 90);
        clock.advanceMillis(1000);
        nxdomains("victim.example", stale, 1);
        assertTrue(limits.limiter().flooded(victim), "counted for the answer's own domain");
        assertFalse(limits.limiter().flooded(other), "not for the domain that has the slot now");
    }

    @Test
    void anAnswerWithoutANoteIsCountedByItsName() {
        int victim = counter("victim.example");
        nxdomains("victim.example", Query.NO_NOTE, 90);
        clock.advanceMillis(1000);
        nxdomains("victim.example", Query.NO_NOTE, 1);
        assertTrue(limits.limiter().flooded(victim));
    }

    @Test
    void anExemptDomainIsNeverCutAndOneExemptedByAReloadIsReleased() throws Exception {
        limits.close();
        limits = Limits.from(settings("  flood: { detect: true, nxdomain-ratio: 0.5, min-answers: 20, budget: 0.1,"
                + " exempt-domains: [zen.spamhaus.org] }\n").limits(), clock);
        watch = watcher();
        int dnsbl = counter("spamhaus.org");
        int victim = counter("victim.example");
        for (int window = 0; window < 3; window++) {
            nxdomains("zen.spamhaus.org", Query.NO_NOTE, 90);
            nxdomains("victim.example", Query.NO_NOTE, 90);
            clock.advanceMillis(1000);
        }
        nxdomains("zen.spamhaus.org", Query.NO_NOTE, 1);
        nxdomains("victim.example", Query.NO_NOTE, 1);
        assertFalse(limits.limiter().flooded(dnsbl), "zen.spamhaus.org is listed: spamhaus.org is never cut");
        assertTrue(limits.limiter().flooded(victim), "an unlisted domain, the same answers: cut");

        limits.reload(settings("  flood: { detect: true, nxdomain-ratio: 0.5, min-answers: 20, budget: 0.1,"
                + " exempt-domains: [zen.spamhaus.org, victim.example] }\n").limits());
        nxdomains("victim.example", Query.NO_NOTE, 90);
        clock.advanceMillis(1000);
        nxdomains("victim.example", Query.NO_NOTE, 1);
        assertFalse(limits.limiter().flooded(victim), "named by the reload: released at its next window's end");
    }

    @Test
    void aDomainFarUnderItsBudgetIsNotJudgedHoweverManyNxdomains() {
        // A DNSBL at 30 lookups a second under a budget of 100, every answer NXDOMAIN: a cut would
        // buy the upstream nothing, and refuse a mail server's lookups.
        int dnsbl = counter("dnsbl.example");
        for (int window = 0; window < 5; window++) {
            nxdomains("dnsbl.example", Query.NO_NOTE, 30);
            clock.advanceMillis(1000);
        }
        nxdomains("dnsbl.example", Query.NO_NOTE, 1);
        assertFalse(limits.limiter().flooded(dnsbl), "30 answers a window, a fifth of what presses on 100");
        nxdomains("dnsbl.example", Query.NO_NOTE, 90); // the budget pressed on: a flood after all
        clock.advanceMillis(1000);
        nxdomains("dnsbl.example", Query.NO_NOTE, 1);
        assertTrue(limits.limiter().flooded(dnsbl));
    }

    private AnswerSide watcher() {
        Registry meters = new Registry();
        return Floods.watch(limits, meters).watcher(limits, new LimitMeters(meters));
    }

    private Settings settings(String flood) throws Exception {
        Path f = dir.resolve("exempt.yml");
        Files.writeString(f, "limits:\n  default: { queries: 100, window: 1s }\n" + flood);
        Settings.Builder b = new Settings.Builder();
        ConfigFile.apply(f, b);
        b.set("upstreams", List.of("127.0.0.1:53"));
        return b.build();
    }

    private int counter(String domain) {
        int c = limits.limiter().counterFor(DomainProbe.of(domain));
        assertNotEquals(DomainLimiter.NONE, c);
        return c;
    }

    /** {@code n} NXDOMAIN answers to random names under {@code domain}, the queries noted {@code note}. */
    private void nxdomains(String domain, long note, int n) {
        for (int i = 0; i < n; i++) {
            ByteBuf query = Unpooled.wrappedBuffer(Dns.query(i, "r" + i + "x" + clock.epochNanos() + "." + domain + ".", Type.A));
            QueryView view = new QueryView();
            view.read(query);
            ByteBuf reply = query.copy();
            reply.setByte(2, 0x80); // QR
            reply.setByte(3, Wire.RCODE_NXDOMAIN);
            watch.answer(new Answer().fill(query, view, Route.nobody(true), note, reply, Answer.Source.UPSTREAM));
        }
    }
}
