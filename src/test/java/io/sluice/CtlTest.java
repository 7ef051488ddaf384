package io.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.limit.ManualClock;
import io.sluice.testing.Await;
import io.sluice.testing.Dns;
import io.sluice.testing.Ports;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/** {@code sluice ctl} against a running sluice's admin API: its output and exit codes. */
class CtlTest {
    @TempDir
    Path dir;

    record Run(int code, String out, String err) {
    }

    private static Run ctl(RunningSluice s, String... args) {
        List<String> all = new ArrayList<>(List.of("ctl", "--admin", "127.0.0.1:" + s.sluice().adminAddress().getPort()));
        all.addAll(List.of(args));
        return run(all.toArray(new String[0]));
    }

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void limitSetLsRmChangeWhatDnsClientsGet() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), new ManualClock(), b -> { }, "admin.listen", "127.0.0.1:0")) {
            Run set = ctl(s, "limit", "set", "example.com", "1/1h", "--ttl", "10m", "--reason", "ticket 42");
            assertEquals(0, set.code(), set.err());
            assertTrue(set.out().startsWith("example.com: 1 per 1h until "), set.out());
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(1, "a.example.com.", Type.A))));
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.udp(s.address(), Dns.query(2, "b.example.com.", Type.A))));
            Run ls = ctl(s, "limit", "ls");
            assertEquals(0, ls.code(), ls.err());
            String[] lines = ls.out().split("\n");
            assertTrue(lines[0].matches("DOMAIN +LIMIT +SOURCE +EXPIRES +REASON"), ls.out());
            assertTrue(lines[1].matches("\\(default\\) +unlimited +file"), ls.out());
            assertTrue(lines[2].matches("example\\.com +1 per 1h +api +\\S+Z +ticket 42"), ls.out());
            Run rm = ctl(s, "limit", "rm", "example.com");
            assertEquals(0, rm.code(), rm.err());
            assertEquals("example.com: runtime limit removed, now unlimited\n", rm.out());
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(3, "c.example.com.", Type.A))));
            Run again = ctl(s, "limit", "rm", "example.com");
            assertEquals(1, again.code(), "the server says no");
            assertEquals(1, again.err().strip().split("\n").length, again.err());
            assertTrue(again.err().startsWith("sluice ctl: example.com has no runtime limit"), again.err());
            Run www = ctl(s, "limit", "set", "www.example.com", "5/1s");
            assertEquals(1, www.code());
            assertTrue(www.err().contains("www.example.com counts for example.com"), www.err());
        }
    }

    @Test
    void topHealthAndReload() throws Exception {
        Path conf = dir.resolve("sluice.yml");
        Files.writeString(conf, "limits:\n  default: unlimited\n");
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), new ManualClock(), b -> b.configFile(conf),
                     "admin.listen", "127.0.0.1:0")) {
            for (int i = 0; i < 4; i++) {
                Dns.udp(s.address(), Dns.query(i, "w" + i + ".busy.example.", Type.A));
            }
            Run top = Await.result("busy.example's 4 queries in top", Duration.ofSeconds(5), () -> {
                Run r = ctl(s, "top", "-n", "5"); // the rings are drained four times a second
                return r.out().contains("busy.example  4") ? r : null;
            });
            assertEquals(0, top.code(), top.err());
            assertTrue(top.out().matches("(?s)DOMAIN +QUERIES +REFUSED +LIMIT +LIMITED\nbusy\\.example +4 +0 +unlimited +no\n"),
                    top.out());
            Run stats = ctl(s, "stats", "queries", "answers", "tracked");
            assertEquals(0, stats.code(), stats.err());
            assertEquals("answers=4\nqueries=4\ntracked-domains=1\n", stats.out(), "named by prefix, in name order");
            Run all = ctl(s, "stats");
            assertTrue(all.out().contains("\nlimited=0\n") && all.out().lines().allMatch(l -> l.matches("[a-z_-]+=[0-9]+")),
                    all.out());
            Run health = ctl(s, "health");
            assertEquals(0, health.code(), health.err());
            assertEquals("alive, ready\n", health.out());
            Run none = ctl(s, "reload");
            assertEquals(0, none.code(), none.err());
            assertEquals("reloaded: nothing changed\n", none.out());
            Files.writeString(conf, "limits:\n  default: { queries: 10 }\n");
            Run changed = ctl(s, "reload");
            assertEquals("reloaded: limits.default: unlimited -> 10 per 1s\n", changed.out());
            Files.writeString(conf, "limits:\n  default: { queries: ten }\n");
            Run bad = ctl(s, "reload");
            assertEquals(1, bad.code());
            assertTrue(bad.err().startsWith("sluice ctl: " + conf + " line 2: limits.default.queries"), bad.err());
        }
    }

    @Test
    void cacheFlushMakesTheNextQueryReachTheUpstream() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), new ManualClock(), b -> { }, "admin.listen", "127.0.0.1:0",
                     "cache.size", "1000")) {
            Dns.udp(s.address(), Dns.query(1, "www.example.com.", Type.AAAA));
            Dns.udp(s.address(), Dns.query(2, "www.example.com.", Type.AAAA));
            assertEquals(1, up.udpQueries(), "the second from the cache");
            assertEquals("cache_hits=1\ncache_misses=1\n", ctl(s, "stats", "cache_hits", "cache_misses").out());
            Run show = ctl(s, "cache", "show", "www.example.com");
            assertEquals(0, show.code(), show.err());
            assertTrue(show.out().matches("(?s)TYPE +RCODE +RECORDS +TTL +TRANSPORT +FLAGS\nAAAA +NOERROR +1 +300 +udp/512 +rd\n"),
                    show.out());
            Run one = ctl(s, "cache", "flush", "www.example.com", "--type", "aaaa");
            assertEquals(0, one.code(), one.err());
            assertEquals("flushed 1 answer AAAA of www.example.com\n", one.out());
            Dns.udp(s.address(), Dns.query(3, "www.example.com.", Type.AAAA));
            assertEquals(2, up.udpQueries());
            Run under = ctl(s, "cache", "flush", "example.com", "--subtree");
            assertEquals("flushed 1 answer under example.com\n", under.out());
            Run all = ctl(s, "cache", "flush", "--all");
            assertEquals("flushed 0 answers\n", all.out());
            assertEquals(2, ctl(s, "cache", "flush").code(), "a NAME or --all: nothing is flushed by default");
            Dns.udp(s.address(), Dns.query(4, "www.example.com.", Type.AAAA));
            assertEquals(3, up.udpQueries());
            Run empty = ctl(s, "cache", "flush", ""); // "$NAME" of an unset variable
            assertEquals(2, empty.code(), empty.err());
            assertEquals(2, ctl(s, "cache", "show", " ").code());
            Dns.tcp(s.address(), Dns.query(5, "www.example.com.", Type.AAAA));
            assertTrue(ctl(s, "cache", "show", "www.example.com").out().matches("(?s).*\nAAAA +NOERROR +1 +300 +tcp +rd\n.*"),
                    "the TCP answer, kept apart from the UDP one");
            Dns.udp(s.address(), Dns.query(5, "www.example.com.", Type.AAAA));
            assertEquals(3, up.udpQueries(), "the answer stayed: an empty NAME flushes nothing");
            assertEquals(2, ctl(s, "cache", "flush", "--all", "--type", "A").code());
            Run badType = ctl(s, "cache", "flush", "www.example.com", "--type", "NOPE");
            assertEquals(1, badType.code(), "the server says no");
            assertTrue(badType.err().contains("type"), badType.err());
        }
    }

    @Test
    void badArgumentsExitTwoAndAnUnreachableServerOne() throws Exception {
        Run noCommand = run("ctl");
        assertEquals(2, noCommand.code());
        assertTrue(noCommand.err().startsWith("sluice ctl: "), noCommand.err());
        Run badBudget = run("ctl", "limit", "set", "example.com", "lots");
        assertEquals(2, badBudget.code());
        assertEquals(1, badBudget.err().strip().split("\n").length, badBudget.err());
        assertEquals(2, run("ctl", "top", "--by", "latency").code());
        int port = Ports.freeUdpAndTcp();
        Run away = run("ctl", "--admin", "127.0.0.1:" + port, "health");
        assertEquals(1, away.code());
        assertTrue(away.err().startsWith("sluice ctl: cannot reach http://127.0.0.1:" + port), away.err());
        Run colon = run("ctl", "--admin", ":" + port, "health");
        assertTrue(colon.err().startsWith("sluice ctl: cannot reach http://127.0.0.1:" + port), ":PORT as the server takes it: " + colon.err());
        for (String bad : new String[] {"127.0.0.1", "host:port", "a b:80", "127.0.0.1:70000"}) {
            Run r = run("ctl", "--admin", bad, "health");
            assertEquals(2, r.code(), bad + ": " + r.err());
            assertEquals("sluice ctl: --admin: HOST:PORT, :PORT or PORT is needed, not '" + bad + "' (see --help)", r.err().strip().split("\n")[0]);
        }
    }
}
