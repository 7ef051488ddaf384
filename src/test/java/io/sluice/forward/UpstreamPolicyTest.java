package io.sluice.forward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/** Which upstream a query asks first ({@code upstream-policy}), over real sockets to two upstreams. */
class UpstreamPolicyTest {
    @Test
    void sequentialAsksTheFirstWhileItAnswers() throws Exception {
        try (TestUpstream a = new TestUpstream(); TestUpstream b = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(a, b))) {
            ask(s, 20);
            assertEquals(20, a.udpQueries());
            assertEquals(0, b.udpQueries());
        }
    }

    @Test
    void roundRobinTakesTurns() throws Exception {
        try (TestUpstream a = new TestUpstream(); TestUpstream b = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(a, b), "upstream-policy", "round-robin", "threads", "1")) {
            ask(s, 20);
            assertEquals(10, a.udpQueries());
            assertEquals(10, b.udpQueries());
        }
    }

    @Test
    void randomSpreadsTheQueries() throws Exception {
        try (TestUpstream a = new TestUpstream(); TestUpstream b = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(a, b), "upstream-policy", "random")) {
            ask(s, 400);
            // a fair coin 400 times: outside 120-280 about once in 10^15
            assertTrue(a.udpQueries() > 120 && b.udpQueries() > 120, a.udpQueries() + " and " + b.udpQueries());
            assertEquals(400, a.udpQueries() + b.udpQueries());
        }
    }

    @Test
    void anUpstreamThatFailsSendsItsQueriesToTheOtherWhateverComesFirst() throws Exception {
        try (TestUpstream silent = new TestUpstream(); TestUpstream good = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(silent, good), "upstream-policy", "round-robin",
                     "threads", "1", "timeout", "200ms", "max-fails", "1")) {
            silent.mode(TestUpstream.Mode.SILENT);
            ask(s, 10); // the first asks the silent one, times out, then the good one; then it is down
            assertEquals(1, silent.udpQueries(), "down after its first timeout");
            assertEquals(10, good.udpQueries());
        }
    }

    /** {@code n} different names over UDP, one after another, each answered. */
    private static void ask(RunningSluice s, int n) throws Exception {
        for (int i = 0; i < n; i++) {
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(i, "q" + i + ".example.", Type.A))));
        }
    }
}
