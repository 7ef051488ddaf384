package io.sluice.forward;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Type;

/**
 * An idle sluice lets its event loops sleep: the deadline tick runs only while queries are in
 * flight. Counted by the kernel, as the loop threads' voluntary context switches (one per sleep).
 */
class IdleLoopTest {

    @Test
    void loopsDoNotWakeWhenNothingIsInFlight() throws Exception {
        Set<Path> earlier = loopThreads(); // of sluices started by other tests, if any are still going
        try (TestUpstream upstream = new TestUpstream();
             RunningSluice sluice = RunningSluice.start(List.of(upstream), "timeout", "500ms")) {
            for (int i = 0; i < 20; i++) {
                assertNotNull(Dns.udp(sluice.address(), Dns.query(i, "idle" + i + ".example.", Type.A)));
            }
            Thread.sleep(300); // the tick after the last answer (every 50 ms here) drains the queue

            long before = sleeps(earlier);
            Thread.sleep(1000);
            long woke = sleeps(earlier) - before;
            // Ticking every 50 ms, each loop would sleep and wake about 20 times in that second.
            assertTrue(woke <= 4, "event loops woke " + woke + " times in an idle second");
        }
    }

    /** Voluntary context switches so far of the sluice event-loop threads not in {@code except}. */
    private static long sleeps(Set<Path> except) throws IOException {
        long sum = 0;
        for (Path t : loopThreads()) {
            if (except.contains(t)) {
                continue;
            }
            try {
                for (String line : Files.readAllLines(t.resolve("status"))) {
                    if (line.startsWith("voluntary_ctxt_switches:")) {
                        sum += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                    }
                }
            } catch (IOException gone) {
                // the thread ended after being listed
            }
        }
        return sum;
    }

    /** This JVM's threads named as sluice's event loops, as their /proc directories. */
    private static Set<Path> loopThreads() throws IOException {
        Set<Path> loops = new HashSet<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : tasks.toList()) {
                try {
                    if (Files.readString(t.resolve("comm")).startsWith("sluice-loop")) {
                        loops.add(t);
                    }
                } catch (IOException gone) {
                    // the thread ended after being listed
                }
            }
        }
        return loops;
    }
}
