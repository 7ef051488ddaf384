package io.sluice;

import static io.sluice.testing.SluiceProcess.runToExit;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.testing.Await;
import io.sluice.testing.Dns;
import io.sluice.testing.SluiceProcess;
import io.sluice.testing.SluiceProcess.Exit;
import io.sluice.testing.TestUpstream;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/** The command line contract, run as a real process: flags, messages, exit codes, signals. */
class CommandLineTest {
    @TempDir
    Path dir;

    @Test
    void helpAndVersionExitZero() throws Exception {
        Exit help = runToExit("--help");
        assertEquals(0, help.code());
        assertTrue(help.out().contains("--upstream") && help.out().contains("--timeout")
                && help.out().contains("--backend") && help.out().contains("--state-file"), help.out());
        Exit version = runToExit("--version");
        assertEquals(0, version.code());
        assertTrue(version.out().startsWith("sluice "), version.out());
    }

    @Test
    void badFlagsExitTwoWithOneLineNamingTheFlag() throws Exception {
        assertUsage(runToExit("--bogus"), "--bogus"); // as a process: the exit code itself
        // the rest through what main exits with, in this JVM: the same parse, without a JVM started for each
        assertUsage(inThisJvm("--timeout", "5x"), "--timeout");
        assertUsage(inThisJvm("--threads", "zero"), "--threads");
        assertUsage(inThisJvm("--listen", "localhost"), "--listen");
        assertUsage(inThisJvm("--upstream", "1.2.3.4:99999"), "--upstream");
        assertUsage(inThisJvm("--limit", "-5"), "--limit");
        assertUsage(inThisJvm("--window", "1d"), "--window");
        assertUsage(inThisJvm("--algorithm", "leaky-bucket"), "--algorithm");
        assertUsage(inThisJvm("--action", "reject"), "--action");
        assertUsage(inThisJvm("--burst", "-1"), "--burst");
        assertUsage(inThisJvm("--max-domains", "none"), "--max-domains");
        assertUsage(inThisJvm("--public-suffix-list", "/no/such/list.dat"), "--public-suffix-list");
        assertUsage(inThisJvm("--backend", "postgres"), "--backend");
        assertUsage(inThisJvm("--redis", "localhost:6379"), "--redis");
        assertUsage(inThisJvm("--redis-cluster", "a:b:c"), "--redis-cluster");
        assertUsage(inThisJvm("--redis-mode", "eventual"), "--redis-mode");
        assertUsage(inThisJvm("--redis-timeout", "soon"), "--redis-timeout");
        assertUsage(inThisJvm("--redis-failure", "panic"), "--redis-failure");
        assertUsage(inThisJvm("--sync-interval", "0ms"), "--sync-interval");
    }

    @Test
    void anOverrideThatIsNotARegistrableDomainExitsTwo() throws Exception {
        Path f = dir.resolve("limits.yml");
        Files.writeString(f, "upstreams: [127.0.0.1:53]\nlimits:\n  domains:\n    www.example.com: { queries: 5 }\n");
        Exit r = runToExit("--config", f.toString(), "--listen", "127.0.0.1:0");
        assertUsage(r, "www.example.com");
        assertTrue(r.err().contains("example.com"), r.err());
    }

    @Test
    void checkConfigSaysOkOrNamesTheFirstErrorAsAStartWould() throws Exception {
        Path f = dir.resolve("check.yml");
        Files.writeString(f, "upstreams: [127.0.0.1:53]\nlimits:\n  default: { queries: 5 }\n");
        Exit ok = runToExit("--config", f.toString(), "--check-config");
        assertEquals(0, ok.code(), ok.err());
        assertEquals("sluice: configuration OK: " + f, ok.out().strip());
        Files.writeString(f, "upstreams: [127.0.0.1:53]\nlimits:\n  domains:\n    www.example.com: { queries: 5 }\n");
        assertUsage(inThisJvm("--config", f.toString()), "www.example.com"); // found where a start finds it
        Files.writeString(f, "upstreams: [127.0.0.1:53]\ntimeout: forever\n");
        Exit bad = inThisJvm("--config", f.toString(), "--check-config");
        assertUsage(bad, "timeout");
        assertTrue(bad.err().contains("line 2"), bad.err());
        Files.writeString(f, "upstreams: [127.0.0.1:53]\n");
        assertUsage(inThisJvm("--config", f.toString(), "--query-timeout", "soon", "--check-config"), "--query-timeout");
        Path secret = dir.resolve("cookie-secret");
        Files.writeString(secret, "0123456789abcdef\n"); // 8 octets, not 16
        Files.writeString(f, "upstreams: [127.0.0.1:53]\ncookies:\n  secret-file: " + secret + "\n");
        assertUsage(inThisJvm("--config", f.toString(), "--check-config"), "cookies.secret-file: " + secret);
    }

    @Test
    void badConfigFileExitsTwoNamingKeyAndLine() throws Exception {
        Path f = dir.resolve("bad.yml");
        Files.writeString(f, "listen: 127.0.0.1:0\n# a comment\ntimeout: forever\n");
        Exit r = runToExit("--config", f.toString());
        assertUsage(r, "timeout");
        assertTrue(r.err().contains("line 3"), r.err());

        Files.writeString(f, "upstreams: [127.0.0.1:53]\nlisen: 127.0.0.1:53\n");
        r = inThisJvm("--config", f.toString());
        assertUsage(r, "lisen");
        assertTrue(r.err().contains("line 2") && r.err().contains("unknown key"), r.err());

        Files.writeString(f, "timeout: [1s\n");
        assertUsage(inThisJvm("--config", f.toString()), "YAML");

        assertUsage(inThisJvm("--config", dir.resolve("missing.yml").toString()), "missing.yml");
    }

    @Test
    void aTakenPortExitsOne() throws Exception {
        try (DatagramSocket taken = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
            Exit r = runToExit("--listen", "127.0.0.1:" + taken.getLocalPort(), "--upstream", "127.0.0.1:53");
            assertEquals(1, r.code(), r.err());
            assertTrue(r.err().contains("127.0.0.1:" + taken.getLocalPort()) && r.err().contains("in use"), r.err());
        }
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Exit r = runToExit("--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:53",
                    "--metrics", "127.0.0.1:" + taken.getLocalPort());
            assertEquals(1, r.code(), r.err());
            assertTrue(r.err().contains("metrics") && r.err().contains(String.valueOf(taken.getLocalPort())), r.err());
            assertEquals(1, r.err().strip().split("\n").length, "one line: " + r.err());
        }
    }

    @Test
    void bindFailuresSayWhatTheKernelSaid() throws Exception {
        Exit r = runToExit("--listen", "192.0.2.1:1053", "--upstream", "127.0.0.1:53");
        assertEquals(1, r.code(), r.err());
        assertTrue(r.err().contains("192.0.2.1:1053") && r.err().contains("cannot assign requested address")
                && !r.err().contains("in use"), r.err());
    }

    @Test
    void aListenAddressGivenTwiceOrUsedAsUpstreamExitsTwo() throws Exception {
        int port;
        try (DatagramSocket free = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
            port = free.getLocalPort();
        }
        String at = "127.0.0.1:" + port;
        Exit twice = runToExit("--listen", at, "--listen", at, "--upstream", "127.0.0.1:53");
        assertUsage(twice, at);
        assertTrue(twice.err().contains("--listen: " + at + " is given twice"), twice.err());
        Exit loop = inThisJvm("--listen", at, "--upstream", at);
        assertUsage(loop, "--upstream: " + at + " is sluice's own listen address " + at);
        Exit wildcard = inThisJvm("--listen", "0.0.0.0:" + port, "--upstream", at);
        assertUsage(wildcard, "own listen address 0.0.0.0:" + port);
    }

    /**
     * SIGHUP re-reads --config and puts new limits in force while serving; an invalid file is
     * logged with its line and changes nothing. SIGUSR1 is logged and ignored.
     */
    @Test
    void sighupReloadsTheFileAndSigusr1IsIgnored() throws Exception {
        Path conf = dir.resolve("reload.yml");
        Files.writeString(conf, "limits:\n  default: unlimited\n");
        try (TestUpstream up = new TestUpstream()) {
            SluiceProcess s = serve("signals.log", "--config", conf.toString(), "--upstream", up.hostPort(),
                    "--threads", "1");
            for (int i = 0; i < 3; i++) {
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.at(), Dns.query(i, "a" + i + ".example.com.", Type.A))));
            }
            Files.writeString(conf, "limits:\n  default: unlimited\n  domains:\n    example.com: { queries: 1, window: 1h }\n");
            signal(s, "HUP", "SIGHUP: reloaded; limits.domains.example.com: added, 1 per 1h");
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.at(), Dns.query(10, "b.example.com.", Type.A))));
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.udp(s.at(), Dns.query(11, "c.example.com.", Type.A))));
            Files.writeString(conf, "limits:\n  default: unlimited\n  domains:\n    example.com: { queries: lots }\n");
            signal(s, "HUP", "SIGHUP: reload failed, the running settings stay: " + conf + " line 4");
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.udp(s.at(), Dns.query(12, "d.example.com.", Type.A))),
                    "the running limits stay");
            signal(s, "USR1", "SIGUSR1 ignored");
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.at(), Dns.query(13, "still.example.", Type.A))));
            s.process().destroy();
            assertTrue(s.process().waitFor(10, TimeUnit.SECONDS));
            assertEquals(0, s.process().exitValue());
        }
    }

    /** Started under nohup, SIGHUP stays ignored (the JVM keeps an ignored signal so): the log says how to reload instead. */
    @Test
    void underNohupTheLogSaysSighupDoesNotReload() throws Exception {
        Path conf = dir.resolve("nohup.yml");
        Files.writeString(conf, "limits:\n  default: unlimited\n");
        Path log = dir.resolve("nohup.log");
        ProcessBuilder pb = SluiceProcess.command("--config", conf.toString(), "--listen", "127.0.0.1:0",
                "--upstream", "127.0.0.1:9", "--threads", "1");
        pb.command().add(0, "nohup");
        Process p = pb.redirectError(log.toFile()).redirectOutput(dir.resolve("nohup.out").toFile()).start();
        try {
            String started = Await.result("the start line", Duration.ofSeconds(20),
                    () -> Files.readString(log).contains("listening on") ? Files.readString(log) : null);
            assertTrue(started.contains("SIGHUP is ignored (started under nohup?) and does not reload"), started);
        } finally {
            p.destroy();
            assertTrue(p.waitFor(10, TimeUnit.SECONDS));
        }
    }

    /** Sends {@code signal} to {@code s} and waits until its log says {@code logged}. */
    private static void signal(SluiceProcess s, String signal, String logged) throws Exception {
        int before = Files.readString(s.log()).split(java.util.regex.Pattern.quote(logged), -1).length;
        Process kill = new ProcessBuilder("kill", "-" + signal, String.valueOf(s.process().pid())).start();
        assertEquals(0, kill.waitFor());
        Await.result("the log to say " + logged, Duration.ofSeconds(10),
                () -> Files.readString(s.log()).split(java.util.regex.Pattern.quote(logged), -1).length > before ? logged : null);
        assertTrue(s.process().isAlive(), "still running after SIG" + signal);
    }

    @Test
    void anAdminListenerOffLoopbackWithoutATokenExitsTwo() throws Exception {
        Exit e = runToExit("--admin", "0.0.0.0:0", "--upstream", "127.0.0.1:53");
        assertUsage(e, "--admin: 0.0.0.0:0 is not a loopback address: give admin.token-file (--admin-token-file)");
    }

    @Test
    void servesThenStopsCleanlyOnSigterm() throws Exception {
        try (TestUpstream up = new TestUpstream()) {
            SluiceProcess s = serve("stderr.log", "--upstream", up.hostPort(), "--threads", "1",
                    "--limit", "50", "--window", "2s", "--algorithm", "sliding-window", "--action", "nxdomain",
                    "--max-domains", "500", "--dry-run", "--cache-size", "1001");
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.tcp(s.at(), Dns.query(1, "cli.example.", Type.A))));
            s.process().destroy(); // SIGTERM
            assertTrue(s.process().waitFor(10, TimeUnit.SECONDS));
            String err = Files.readString(s.log());
            assertEquals(0, s.process().exitValue(), err);
            assertTrue(err.contains("listening on 127.0.0.1:" + s.at().getPort()) && err.contains("upstreams " + up.hostPort())
                    && err.contains("threads 1") && err.contains("transport "), err);
            assertTrue(err.contains("; cache 1004 answers;"), "the cache's size as kept, whole buckets of four: " + err);
            assertTrue(err.contains("limits sliding-window 50 per 2s, action nxdomain (dry run), 0 overrides"), err);
            assertTrue(err.contains("stopped;"), err);
        }
    }

    @Test
    void sigtermLetsQueriesInFlightFinish() throws Exception {
        try (TestUpstream up = new TestUpstream()) {
            SluiceProcess serving = serve("drain.log", "--upstream", up.hostPort(), "--timeout", "3s");
            Process p = serving.process();
            InetSocketAddress at = serving.at();
            Path log = serving.log();
            up.delayMillis(800);
            try (DatagramSocket client = new DatagramSocket()) {
                client.setSoTimeout(5000);
                byte[] q = Dns.query(0x5151, "slow.example.", Type.A);
                int asked = up.udpQueries();
                client.send(new DatagramPacket(q, q.length, at));
                Await.until("the query forwarded", () -> up.udpQueries() > asked); // it now waits on the upstream
                p.destroy(); // SIGTERM
                byte[] buf = new byte[512];
                DatagramPacket answer = new DatagramPacket(buf, buf.length);
                client.receive(answer);
                assertEquals(0x5151, Dns.id(buf), "the query in flight was answered after SIGTERM");
                assertEquals(Rcode.NOERROR, Dns.rcode(buf));
            }
            assertTrue(p.waitFor(10, TimeUnit.SECONDS));
            assertEquals(0, p.exitValue(), Files.readString(log));
            assertNull(Dns.udp(at, Dns.query(2, "after.example.", Type.A), 300), "nothing listens any more");
        }
    }

    private SluiceProcess serve(String logName, String... args) throws IOException, InterruptedException {
        return SluiceProcess.serve(dir.resolve(logName), SluiceProcess.QUICK_START, args);
    }

    /**
     * What {@code main} would exit with, and write, for {@code args} with {@code --check-config}
     * (added when absent): run in this JVM, which it never starts serving, since a flag's error
     * ends a start at the same point a check ends.
     */
    private static Exit inThisJvm(String... args) {
        List<String> checked = new ArrayList<>(List.of(args));
        if (!checked.contains("--check-config")) {
            checked.add("--check-config");
        }
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), checked.toArray(String[]::new));
        return new Exit(code, out.toString(), err.toString());
    }

    private static void assertUsage(Exit r, String names) {
        assertEquals(2, r.code(), r.err());
        String[] lines = r.err().strip().split("\n");
        assertEquals(1, lines.length, "one line: " + r.err());
        assertTrue(lines[0].startsWith("sluice: ") && lines[0].contains(names), r.err());
    }

}
