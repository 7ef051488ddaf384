package io.sluice.forward;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
        // Loops of sluices started by other tests, if any are still going, are left out.
        Set<Path> earlier = loopSleeps().keySet();
        try (TestUpstream upstream = new TestUpstream();
             RunningSluice sluice = RunningSluice.start(List.of(upstream), "timeout", "500ms")) {
            for (int i = 0; i < 20; i++) {
                assertNotNull(Dns.udp(sluice.address(), Dns.query(i, "idle" + i + ".example.", Type.A)));
            }
            // A sleep by design: the tick after the last answer (every 50 ms here) drains the queue and
            // says so nowhere a test can see; 300 ms hold six ticks.
            Thread.sleep(300);

            long before = sum(loopSleeps(), earlier);
            Thread.sleep(1000); // a sleep by design: what is measured is what happens in an idle second
            long woke = sum(loopSleeps(), earlier) - before;
            // Ticking every 50 ms, each loop would sleep and wake about 20 times in that second.
            assertTrue(woke <= 4, "event loops woke " + woke + " times in an idle second");
        }
    }

    private static long sum(Map<Path, Long> sleeps, Set<Path> except) {
        return sleeps.entrySet().stream().filter(e -> !except.contains(e.getKey()))
                .mapToLong(Map.Entry::getValue).sum();
    }

    /** Voluntary context switches so far of this JVM's sluice event-loop threads, by /proc directory. */
    private static Map<Path, Long> loopSleeps() throws IOException {
        Map<Path, Long> sleeps = new HashMap<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : tasks.toList()) {
                try {
                    if (!Files.readString(t.resolve("comm")).startsWith("sluice-loop")) {
                        continue;
                    }
                    for (String line : Files.readAllLines(t.resolve("status"))) {
                        if (line.startsWith("voluntary_ctxt_switches:")) {
                            sleeps.put(t, Long.parseLong(line.substring(line.indexOf(':') + 1).trim()));
                        }
                    }
                } catch (IOException gone) {
                    // the thread ended after being listed
                }
            }
        }
        return sleeps;
    }
}
