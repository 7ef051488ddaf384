package io.sluice.coalesce;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBufUtil;
import io.sluice.limit.ManualClock;
import io.sluice.pipeline.Outcome;
import io.sluice.testing.Dns;
import io.sluice.testing.RecordingRoute;
import io.sluice.testing.StageHarness;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** The waiters' bookkeeping, on one loop's path without sockets: the upstream holds its answers until released. */
class CoalesceStageTest {
    private final LongAdder coalesced = new LongAdder();

    private StageHarness harness(int maxWaiters) {
        StageHarness h = new StageHarness(new ManualClock(), new CoalesceStage(maxWaiters, 1232, coalesced));
        h.record(Dns.answer("www.example.com.", 300));
        return h;
    }

    private static InetSocketAddress client(int i) {
        return new InetSocketAddress("127.0.0." + (1 + i % 200), 40000 + i);
    }

    @Test
    void joinedQueriesWaitForTheLeadersAnswerAndEachGetsItsOwn() throws Exception {
        StageHarness h = harness(100).hold();
        List<RecordingRoute> routes = new ArrayList<>();
        String[] spellings = {"www.example.com.", "WWW.example.COM.", "wWw.ExAmPlE.cOm."};
        for (int i = 0; i < 30; i++) {
            routes.add(h.send(Dns.query(i, spellings[i % 3], Type.A), client(i)));
            assertEquals(i == 0 ? Outcome.PARKED : Outcome.ANSWERED, h.lastOutcome(),
                    "the first leads (the upstream holds it), the rest join it");
        }
        assertEquals(1, h.upstreamQueries());
        assertEquals(29, coalesced.sum());
        assertTrue(routes.stream().allMatch(r -> r.sent.isEmpty()), "nothing answered before the upstream");
        h.release();
        for (int i = 0; i < 30; i++) {
            RecordingRoute r = routes.get(i);
            assertEquals(1, r.sent.size(), "one answer for query " + i);
            Message m = Dns.parse(ByteBufUtil.getBytes(r.sent.get(0)));
            assertEquals(i, m.getHeader().getID());
            assertEquals(spellings[i % 3], m.getQuestion().getName().toString(), "its own letters");
            assertEquals(1, m.getSection(Section.ANSWER).size());
        }
        assertNotNull(h.ask(Dns.query(7, "www.example.com.", Type.A)));
        assertEquals(2, h.upstreamQueries(), "answered, the leader is gone: the next query goes upstream");
    }

    @Test
    void pastMaxWaitersTheNextQueryLeadsTheOnesAfterIt() {
        StageHarness h = harness(2).hold();
        List<RecordingRoute> routes = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            routes.add(h.send(Dns.query(i, "www.example.com.", Type.A), client(i)));
        }
        assertEquals(3, h.upstreamQueries(), "1 + 2, 1 + 2, 1");
        assertEquals(4, coalesced.sum());
        h.release();
        for (RecordingRoute r : routes) {
            assertEquals(1, r.sent.size());
        }
    }

    @Test
    void aFailureReachesEveryWaiter() throws Exception {
        StageHarness h = harness(100).hold();
        List<RecordingRoute> routes = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            routes.add(h.send(Dns.query(i, "unknown.example.com.", Type.A), client(i))); // the upstream fails it
        }
        h.release();
        for (int i = 0; i < 5; i++) {
            byte[] reply = ByteBufUtil.getBytes(routes.get(i).sent.get(0));
            assertEquals(i, Dns.id(reply));
            assertEquals(Rcode.SERVFAIL, Dns.rcode(reply));
        }
        assertEquals(1, h.upstreamQueries());
    }

    @Test
    void otherQuestionsAndQueriesWhoseAnswerIsTheirOwnDoNotJoin() {
        StageHarness h = harness(100).hold();
        h.send(Dns.query(1, "www.example.com.", Type.A), client(1));
        h.send(Dns.query(2, "www.example.com.", Type.AAAA), client(2));
        h.send(Dns.queryWithOpt(3, "www.example.com.", Type.A, List.of()), client(3)); // another UDP size
        h.send(Dns.query(4, "www.example.com.", Type.AXFR), client(4)); // a zone transfer
        assertEquals(4, h.upstreamQueries());
        assertEquals(0, coalesced.sum());
        h.send(Dns.query(5, "WWW.example.com.", Type.A), client(5)); // the first's, in capitals
        assertEquals(4, h.upstreamQueries());
        assertEquals(1, coalesced.sum());
    }
}
