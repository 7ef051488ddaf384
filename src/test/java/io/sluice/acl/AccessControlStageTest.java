package io.sluice.acl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.sluice.config.Settings;
import io.sluice.limit.ManualClock;
import io.sluice.pipeline.Outcome;
import io.sluice.testing.Dns;
import io.sluice.testing.StageHarness;
import io.sluice.testing.TestSettings;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/** The client rules alone, on the stage harness: who is answered, refused or dropped, and counted. */
class AccessControlStageTest {
    private static final InetSocketAddress INSIDE = new InetSocketAddress("10.1.2.3", 5000);
    private static final InetSocketAddress OUTSIDE = new InetSocketAddress("192.0.2.7", 5000);

    private final LongAdder denied = new LongAdder();

    private StageHarness harness(String... keyValues) throws Exception {
        Settings s = TestSettings.of(keyValues);
        ClientRules rules = new ClientRules(s);
        return new StageHarness(new ManualClock(), new AccessControl(rules, denied, new DeniedLog(denied)));
    }

    @Test
    void aClientOutsideIsRefusedWithItsQuestionAndCountedAndOneInsideIsForwarded() throws Exception {
        StageHarness h = harness("allow-clients", "10.0.0.0/8");
        Message refused = Dns.parse(h.ask(Dns.query(7, "www.example.com.", Type.A), OUTSIDE));
        assertEquals(Rcode.REFUSED, refused.getRcode());
        assertEquals(7, refused.getHeader().getID());
        assertEquals("www.example.com.", refused.getQuestion().getName().toString());
        assertEquals(0, h.upstreamQueries());
        assertEquals(1, denied.sum());
        assertEquals(Rcode.SERVFAIL, Dns.rcode(h.ask(Dns.query(8, "www.example.com.", Type.A), INSIDE)),
                "forwarded: the recorded upstream knows no answer for it");
        assertEquals(1, h.upstreamQueries());
        assertEquals(1, denied.sum());
    }

    @Test
    void withAclActionDropAnOutsiderGetsNothing() throws Exception {
        StageHarness h = harness("allow-clients", "10.0.0.0/8", "acl-action", "drop");
        assertNull(h.ask(Dns.query(7, "www.example.com.", Type.A), OUTSIDE));
        assertEquals(Outcome.DROPPED, h.lastOutcome());
        assertEquals(1, denied.sum());
    }
}
