package io.sluice.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.pipeline.UpstreamGate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

class WaitingPerDomainTest {
    @Test
    void aDomainAtItsBoundIsClosedUntilOneOfItsQueriesLeaves() {
        WaitingPerDomain w = new WaitingPerDomain(2);
        long a = 0x1234_5678_9abc_def1L;
        long b = a + (1L << 40); // another domain, the same home word
        int first = w.enter(a);
        int second = w.enter(a);
        assertTrue(first >= 0 && second >= 0);
        assertEquals(UpstreamGate.CLOSED, w.enter(a));
        assertTrue(w.enter(b) >= 0, "another domain has its own count");
        assertEquals(2, w.waiting(a));
        w.leave(first);
        assertEquals(1, w.waiting(a));
        assertTrue(w.enter(a) >= 0);
        assertEquals(UpstreamGate.CLOSED, w.enter(a));
    }

    @Test
    void noBoundOrNoDomainCountsNothing() {
        WaitingPerDomain w = new WaitingPerDomain(0);
        assertEquals(UpstreamGate.NOT_COUNTED, w.enter(42));
        w.bound(1);
        assertEquals(UpstreamGate.NOT_COUNTED, w.enter(0), "0: no bound applies to the query");
        int t = w.enter(42);
        assertEquals(UpstreamGate.CLOSED, w.enter(42));
        w.bound(0);
        assertEquals(UpstreamGate.NOT_COUNTED, w.enter(42), "a reload that lifts the bound opens the gate at once");
        w.leave(t);
        assertEquals(0, w.waiting(42));
        w.leave(UpstreamGate.NOT_COUNTED); // nothing to hand back
    }

    @Test
    void aRunWithNoFreeWordSendsUncounted() {
        WaitingPerDomain w = new WaitingPerDomain(1);
        long home = 7;
        for (int k = 0; k < WaitingPerDomain.PROBES; k++) {
            assertTrue(w.enter(home + ((long) (k + 1) << 40)) >= 0, "domain " + k + " of one run");
        }
        assertEquals(UpstreamGate.NOT_COUNTED, w.enter(home + (999L << 40)), "sent, not refused for want of room");
    }

    /** Loops entering and leaving at once never have more of a domain waiting than its bound, and end at 0. */
    @Test
    void concurrentLoopsNeverPassTheBound() throws Exception {
        int bound = 2;
        int threads = 4;
        int domains = 2;
        WaitingPerDomain w = new WaitingPerDomain(bound);
        AtomicIntegerArray inside = new AtomicIntegerArray(domains);
        AtomicInteger worst = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int seed = t;
            Thread th = new Thread(() -> {
                java.util.Random r = new java.util.Random(seed);
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < 200_000; i++) {
                    int d = r.nextInt(domains);
                    long hash = 0x9E37_79B9_7F4A_7C15L * (d + 1);
                    int ticket = w.enter(hash);
                    if (ticket == UpstreamGate.CLOSED) {
                        continue;
                    }
                    int now = inside.incrementAndGet(d);
                    worst.accumulateAndGet(now, Math::max);
                    inside.decrementAndGet(d);
                    w.leave(ticket);
                }
            });
            th.start();
            all.add(th);
        }
        start.countDown();
        for (Thread th : all) {
            th.join();
        }
        assertTrue(worst.get() <= bound, "at most " + bound + " inside at once, saw " + worst.get());
        for (int d = 0; d < domains; d++) {
            assertEquals(0, w.waiting(0x9E37_79B9_7F4A_7C15L * (d + 1)));
        }
    }
}
