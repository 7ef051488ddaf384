package io.sluice.stress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestCertificates;
import io.sluice.testing.TestUpstream;
import io.sluice.transport.SocketProtocol;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** dnsstress against a real in-test server over loopback: its lines, its summary, its exit codes. */
class StressCommandTest {
    private static final Pattern LINE = Pattern.compile(
            "Requests sent: (\\d+)r/s\tReplies received: (\\d+)r/s \\(mean=(\\d+)ms / max=(\\d+)ms\\)"
                    + "\tNOERROR=(\\d+) REFUSED=(\\d+) SERVFAIL=(\\d+) NXDOMAIN=(\\d+) timeouts=(\\d+)");

    record Result(int code, String out, String err) {
    }

    private static Result run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
        CommandLine cli = new CommandLine(new StressCommand(o, e));
        cli.setErr(new PrintWriter(e, true));
        int code = cli.execute(args);
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void printsDnsstresssLinesThenASummary() throws Exception {
        try (TestUpstream up = new TestUpstream()) {
            Result r = run("-r", up.hostPort(), "-concurrency", "4", "-d", "200", "--duration", "1s", "www.example.",
                    TestUpstream.NX);
            assertEquals(0, r.code, r.err);
            Matcher m = LINE.matcher(r.out);
            int lines = 0;
            long noerror = 0;
            long nxdomain = 0;
            while (m.find()) {
                lines++;
                noerror += Long.parseLong(m.group(5));
                nxdomain += Long.parseLong(m.group(8));
            }
            assertTrue(lines >= 3, r.out);
            assertTrue(noerror > 0 && nxdomain > 0, "targets used in turn: " + r.out);
            assertTrue(r.out.contains("latency ms: min"), r.out);
            assertTrue(r.out.matches("(?s).*sent \\d+, received \\d+, lost 0 .*"), r.out);
        }
    }

    @Test
    void jsonSummaryWithRateRandomSubdomainsAndTcp() throws Exception {
        try (TestUpstream up = new TestUpstream()) {
            Result r = run("-r", up.hostPort(), "--rate", "500", "--duration", "1s", "--random-subdomains", "--json",
                    "example.");
            assertEquals(0, r.code, r.err);
            String json = r.out.strip();
            assertTrue(json.startsWith("{") && json.endsWith("}") && !json.contains("\n"), json);
            long sent = Long.parseLong(json.replaceAll(".*\"sent\":(\\d+).*", "$1"));
            assertTrue(sent >= 400 && sent <= 600, "about 500 in one second at --rate 500: " + json);
            assertTrue(json.contains("\"latency_ms\":{\"min\":") && json.contains("\"p99.9\":"), json);
            assertTrue(json.contains("\"NOERROR\":" + sent), json);
            assertTrue(LINE.matcher(r.err).find(), "interval lines on stderr: " + r.err);
            assertTrue(up.lastQuery().length > 30, "a random label in front of example.");

            Result tcp = run("-r", up.hostPort(), "--tcp", "-concurrency", "8", "--warmup", "200ms",
                    "--duration", "500ms", "--json", "example.");
            assertEquals(0, tcp.code, tcp.err);
            assertTrue(up.tcpQueries() > 0);
        }
    }

    /** The load over DNS over TLS, against sluice's own TLS listener. */
    @Test
    void overTls(@TempDir Path dir) throws Exception {
        Path[] files = TestCertificates.selfSigned(dir, "stress");
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "tls-listen", "127.0.0.1:0",
                     "tls-cert-file", files[0].toString(), "tls-key-file", files[1].toString())) {
            InetSocketAddress at = s.sluice().addresses(SocketProtocol.DOT).get(0);
            Result tls = run("-r", "127.0.0.1:" + at.getPort(), "--tls", "-concurrency", "8", "--warmup", "200ms",
                    "--duration", "500ms", "--json", "example.");
            assertEquals(0, tls.code, tls.err);
            long received = summaryField(tls, "received");
            assertTrue(received > 0, tls.out);
            assertTrue(s.sluice().metrics().count("queries", "protocol", "tls") >= received, "asked over TLS");
            assertEquals(0, s.sluice().metrics().count("queries", "protocol", "tcp"));
        }
    }

    /** The load over DNS over HTTPS: HTTP/2 streams against sluice's own HTTPS listener. */
    @Test
    void overHttps(@TempDir Path dir) throws Exception {
        Path[] files = TestCertificates.selfSigned(dir, "stress");
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "https-listen", "127.0.0.1:0",
                     "tls-cert-file", files[0].toString(), "tls-key-file", files[1].toString())) {
            InetSocketAddress at = s.sluice().addresses(SocketProtocol.DOH).get(0);
            Result https = run("-r", "127.0.0.1:" + at.getPort(), "--https", "-concurrency", "16", "--sockets", "2",
                    "--warmup", "200ms", "--duration", "500ms", "--json", "example.");
            assertEquals(0, https.code, https.err);
            long received = summaryField(https, "received");
            long lost = summaryField(https, "lost");
            assertTrue(received > 0, https.out);
            assertEquals(0, lost, https.out);
            assertTrue(s.sluice().metrics().count("queries", "protocol", "https") >= received, "asked over HTTPS");
        }
    }

    @Test
    void queriesFromAFileInDnsperfFormat(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("q.txt");
        Files.writeString(f, "# a comment\nwww.example. A\nmail.example. MX\n\nbig.example TXT\n");
        try (TestUpstream up = new TestUpstream()) {
            Result r = run("-r", up.hostPort(), "--queries", f.toString(), "-concurrency", "1", "--duration", "300ms");
            assertEquals(0, r.code, r.err);
        }
        Files.writeString(f, "www.example. BOGUS\n");
        Result bad = run("-r", "127.0.0.1:53", "--queries", f.toString(), "--duration", "1s");
        assertEquals(2, bad.code);
        assertTrue(bad.err.contains("line 1") && bad.err.contains("BOGUS"), bad.err);
    }

    @Test
    void aTargetThatNeverAnswersExitsOne() throws Exception {
        try (TestUpstream up = new TestUpstream()) {
            up.mode(TestUpstream.Mode.SILENT);
            Result r = run("-r", up.hostPort(), "--duration", "300ms", "--timeout", "200ms", "example.");
            assertEquals(1, r.code, r.out);
            assertTrue(r.out.contains("received 0"), r.out);
        }
    }

    @Test
    void badArgumentsExitTwo() {
        assertEquals(2, run("-r", "127.0.0.1:53", "--duration", "1s").code, "no target");
        assertEquals(2, run("--duration", "soon", "example.").code);
        assertEquals(2, run("-concurrency", "0", "example.").code);
        assertEquals(2, run("--bogus", "example.").code);
        assertEquals(2, run("-concurrency", "many", "example.").code);
    }

    /** A count of the --json summary, by its name. */
    private static long summaryField(Result r, String name) {
        return Long.parseLong(r.out.replaceAll("(?s).*\"" + name + "\":(\\d+).*", "$1"));
    }
}
