package io.sluice.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.backend.chronicle.ChronicleCounters;
import io.sluice.limit.CounterStore;
import io.sluice.limit.ManualClock;
import io.sluice.testing.Await;
import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.SluiceProcess;
import io.sluice.testing.TestUpstream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import net.openhft.chronicle.core.values.LongValue;
import net.openhft.chronicle.map.ChronicleMap;
import net.openhft.chronicle.values.Values;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/** Counters in a Chronicle Map file: kept across restarts, shared by processes, pruned, and guarded. */
class ChronicleBackendTest {
    @TempDir
    Path dir;
    private final ManualClock clock = new ManualClock();
    private TestUpstream upstream;
    private Path file;

    @BeforeEach
    void upstream() throws Exception {
        upstream = new TestUpstream();
        file = dir.resolve("counters.dat");
    }

    @AfterEach
    void stop() throws Exception {
        upstream.close();
    }

    private RunningSluice sluice(String... keyValues) throws Exception {
        return RunningSluice.start(List.of(upstream), clock, b -> {
            b.set("backend", List.of("chronicle"));
            b.set("state-file", List.of(file.toString()));
        }, keyValues);
    }

    private static int rcode(InetSocketAddress at, int id, String name) throws Exception {
        return Dns.rcode(Dns.udp(at, Dns.query(id, name, Type.A)));
    }

    @Test
    void aRestartWithinTheWindowKeepsItsCounts() throws Exception {
        try (RunningSluice s = sluice("limits.default.queries", "3", "limits.default.window", "1h")) {
            assertEquals(Rcode.NOERROR, rcode(s.address(), 1, "www.kept.com."));
            assertEquals(Rcode.NOERROR, rcode(s.address(), 2, "mail.kept.com."));
        }
        try (RunningSluice s = sluice("limits.default.queries", "3", "limits.default.window", "1h")) {
            assertEquals(Rcode.NOERROR, rcode(s.address(), 3, "kept.com."), "the third of three");
            assertEquals(Rcode.REFUSED, rcode(s.address(), 4, "kept.com."), "the first run's two still count");
            clock.advanceMillis(3_600_000);
            assertEquals(Rcode.NOERROR, rcode(s.address(), 5, "kept.com."), "a new window");
        }
    }

    /** The same words as the memory backend: every algorithm works on the file. */
    @ParameterizedTest
    @CsvSource({"sliding-window", "token-bucket"})
    void theOtherAlgorithmsKeepTheirCountsAcrossARestartToo(String algorithm) throws Exception {
        try (RunningSluice s = sluice("limits.default.queries", "4", "limits.default.window", "1h",
                "limits.algorithm", algorithm)) {
            for (int i = 0; i < 3; i++) {
                assertEquals(Rcode.NOERROR, rcode(s.address(), i, "a" + i + ".algo.net."));
            }
        }
        try (RunningSluice s = sluice("limits.default.queries", "4", "limits.default.window", "1h",
                "limits.algorithm", algorithm)) {
            assertEquals(Rcode.NOERROR, rcode(s.address(), 3, "algo.net."), "the fourth of four");
            assertEquals(Rcode.REFUSED, rcode(s.address(), 4, "algo.net."), "the first run's three still count");
        }
    }

    @Test
    void twoProcessesOnOneFileShareABudget() throws Exception {
        // A window of 1000 hours: both processes read the system clock and must share one window.
        String[] limits = {"--backend", "chronicle", "--state-file", file.toString(), "--limit", "4",
                "--window", "1000h", "--upstream", upstream.hostPort(), "--threads", "1"};
        try (SluiceProcess other = SluiceProcess.serve(dir.resolve("other.log"), SluiceProcess.QUICK_START, limits);
             RunningSluice here = RunningSluice.start(List.of(upstream), "backend", "chronicle",
                     "state-file", file.toString(), "limits.default.queries", "4", "limits.default.window", "1000h")) {
            int answered = 0;
            for (int i = 0; i < 10; i++) {
                InetSocketAddress at = i % 2 == 0 ? other.at() : here.address();
                int rcode = rcode(at, i, "host" + i + ".shared.com.");
                assertTrue(rcode == Rcode.NOERROR || rcode == Rcode.REFUSED, "rcode " + rcode);
                answered += rcode == Rcode.NOERROR ? 1 : 0;
            }
            assertEquals(4, answered, "one budget of 4 between the two processes");
        }
    }

    @Test
    void theFileHoldsAtMostMaxDomainsAndIsPrunedWhenWindowsEnd() throws Exception {
        try (RunningSluice s = sluice("limits.default.queries", "1000", "limits.max-domains", "50",
                "limits.janitor-interval", "50ms")) {
            for (int i = 0; i < 200; i++) {
                assertEquals(Rcode.NOERROR, rcode(s.address(), i, "d" + i + ".com."));
            }
            // at most 50 domains (nine tenths asked once, then only the doorkeeper's false positives:
            // each is asked once) and the overflow counter that the others share
            CounterStore store = s.sluice().limits().limiter().store();
            assertTrue(store.size() >= 46 && store.size() <= 51, "entries " + store.size());
            clock.advanceMillis(2_000);
            Await.until("the janitor thread to empty the file", () -> store.size() == 0); // not a window: the clock moved
            assertEquals(0, store.size(), "the janitor removed the counters of ended windows");
        }
    }

    /**
     * A domain's second query replaces its word in place; the file must still hold one entry per
     * domain, and the janitor must still be able to walk it (a replace that spills over the next
     * entry broke both).
     */
    @Test
    void countingDomainsAgainKeepsOneEntryEachAndTheFileWalkable() throws Exception {
        int domains = 40;
        try (RunningSluice s = sluice("limits.default.queries", "1000", "limits.janitor-interval", "50ms")) {
            for (int round = 0; round < 3; round++) {
                for (int i = 0; i < domains; i++) {
                    String name = "www." + "x".repeat(i % 7) + "d" + i + (i % 2 == 0 ? ".com." : ".co.uk.");
                    assertEquals(Rcode.NOERROR, rcode(s.address(), round * domains + i, name));
                }
            }
            CounterStore store = s.sluice().limits().limiter().store();
            assertEquals(domains, store.size());
            clock.advanceMillis(2_000);
            Await.until("the janitor thread to empty the file", () -> store.size() == 0); // not a window: the clock moved
            assertEquals(0, store.size(), "the janitor walked the file and removed every ended window");
            assertEquals(0, store.failures());
        }
    }

    /** Each domain's key starts with the file's salt, so a client cannot aim names at the segment of another. */
    @Test
    void keysStartWithTheFilesSaltAndAnUnsaltedFileIsDropped() throws Exception {
        // a file as an earlier sluice wrote it: a domain's wire chars as its key, no salt
        try (ChronicleMap<CharSequence, LongValue> old = ChronicleMap.of(CharSequence.class, LongValue.class)
                .name("sluice-counters").entries(100).averageKeySize(16).checksumEntries(false)
                .createPersistedTo(file.toFile())) {
            LongValue v = Values.newHeapInstance(LongValue.class);
            v.setValue(Long.MAX_VALUE >>> 8);
            old.put("\u0007unsalted\u0003com", v);
        }
        try (RunningSluice s = sluice("limits.default.queries", "3", "limits.default.window", "1h")) {
            assertEquals(Rcode.NOERROR, rcode(s.address(), 1, "www.salted.com."));
            assertEquals(1, s.sluice().limits().limiter().store().size(), "the unsalted entry is gone");
        }
        try (ChronicleMap<CharSequence, LongValue> m = ChronicleMap.of(CharSequence.class, LongValue.class)
                .name("sluice-counters").entries(100).averageKeySize(24).checksumEntries(false)
                .createPersistedTo(file.toFile())) {
            List<String> keys = new ArrayList<>();
            m.forEachEntry(e -> keys.add(e.key().get().toString()));
            assertEquals(2, keys.size(), keys.toString());
            assertTrue(keys.contains(ChronicleCounters.SALT_KEY), keys.toString());
            String domain = keys.stream().filter(k -> !k.equals(ChronicleCounters.SALT_KEY))
                    .findFirst().orElseThrow();
            assertEquals(8 + "\u0006salted\u0003com".length(), domain.length());
            assertTrue(domain.endsWith("\u0006salted\u0003com"), domain);
        }
        try (RunningSluice s = sluice("limits.default.queries", "3", "limits.default.window", "1h")) {
            assertEquals(Rcode.NOERROR, rcode(s.address(), 2, "salted.com."));
            assertEquals(Rcode.NOERROR, rcode(s.address(), 3, "salted.com."), "the third of three");
            assertEquals(Rcode.REFUSED, rcode(s.address(), 4, "salted.com."), "the salt read back: the count kept");
        }
    }

    /** Files of sluice before checksums were switched off are corrupted by use: refused like unreadable ones. */
    @Test
    void aFileWithEntryChecksumsIsRefused() throws Exception {
        ChronicleMap.of(CharSequence.class, LongValue.class).name("sluice-counters").entries(100)
                .averageKeySize(16).createPersistedTo(file.toFile()).close(); // checksums: the default
        String err = exitsTwoBeforeListening("--backend", "chronicle", "--state-file", file.toString(), "--limit", "5",
                "--upstream", upstream.hostPort(), "--listen", "127.0.0.1:0");
        assertTrue(err.contains(file.toString()) && err.contains("checksums"), err);
    }

    /** Runs sluice with {@code args}, expects exit 2 before it serves; returns what it wrote to stderr. */
    private static String exitsTwoBeforeListening(String... args) throws Exception {
        SluiceProcess.Exit r = SluiceProcess.runToExit(args);
        assertEquals(2, r.code(), r.err());
        return r.err();
    }

    @Test
    void aCorruptFileExitsTwoUnlessAFreshOneIsAskedFor() throws Exception {
        byte[] junk = new byte[64 * 1024];
        for (int i = 0; i < junk.length; i++) {
            junk[i] = (byte) (i * 31 + 7);
        }
        Files.write(file, junk);
        String[] args = {"--backend", "chronicle", "--state-file", file.toString(), "--limit", "5",
                "--upstream", upstream.hostPort(), "--listen", "127.0.0.1:0"};
        String err = exitsTwoBeforeListening(args);
        assertTrue(err.contains("state-file") && err.contains(file.toString()) && err.lines().count() == 1, err);

        String[] reset = Stream.concat(Stream.of(args).filter(a -> !a.startsWith("127.0.0.1:0") && !a.equals("--listen")),
                Stream.of("--reset-corrupt-state-file")).toArray(String[]::new);
        try (SluiceProcess s = SluiceProcess.serve(dir.resolve("reset.log"), SluiceProcess.QUICK_START, reset)) {
            assertEquals(Rcode.NOERROR, rcode(s.at(), 1, "fresh.com."));
            try (Stream<Path> files = Files.list(dir)) {
                assertTrue(files.anyMatch(f -> f.getFileName().toString().startsWith("counters.dat.corrupt-")),
                        "the unreadable file was kept aside");
            }
        }
    }
}
