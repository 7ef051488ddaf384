package io.sluice.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.Main;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/** sluice run as a real process, from the test classpath, with the JVM flags the tests run with. */
public record SluiceProcess(Process process, InetSocketAddress at, Path log) implements AutoCloseable {

    /** The java command for {@code Main} with {@code args}. */
    public static ProcessBuilder command(String... args) {
        return command(List.of(), args);
    }

    /** The java command for {@code Main} with {@code args}, the JVM also given {@code jvmFlags}. */
    public static ProcessBuilder command(List<String> jvmFlags, String... args) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.addAll(jvmFlags);
        // Surefire's argLine: the module flags Chronicle Map needs, as the jar manifest gives them,
        // and on JDK 22+ native access and Unsafe's memory access, as docs/operations.md says.
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("--add-") || a.startsWith("-Dchronicle") || a.startsWith("--enable-native-access")
                    || a.startsWith("--sun-misc-unsafe-memory-access")) {
                cmd.add(a);
            }
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName()));
        cmd.addAll(List.of(args));
        return new ProcessBuilder(cmd);
    }

    /** How a run of sluice that ended by itself ended. */
    public record Exit(int code, String out, String err) {
    }

    /**
     * The JVM flags that start sluice soonest, the client compiler alone and the serial collector:
     * for a run that is mostly its start, and for tests of a start and a stop rather than of queries.
     */
    public static final List<String> QUICK_START = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");

    /** Runs sluice with {@code args} on {@link #QUICK_START} and waits (up to 30 s) for it to exit by itself. */
    public static Exit runToExit(String... args) throws IOException, InterruptedException {
        Process p = command(QUICK_START, args).start();
        try {
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "exits by itself");
            return new Exit(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8),
                    new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
        } finally {
            p.destroyForcibly();
        }
    }

    /**
     * Starts sluice on a free loopback port, its stderr in {@code log}, and waits until it answers
     * over UDP. A port free when probed can be taken before sluice binds it (an outgoing
     * connection's source port, from the same range): then it starts again on another.
     */
    public static SluiceProcess serve(Path log, String... args) throws IOException, InterruptedException {
        return serve(log, List.of(), args);
    }

    /** {@link #serve(Path, String...)}, the JVM also given {@code jvmFlags}. */
    public static SluiceProcess serve(Path log, List<String> jvmFlags, String... args)
            throws IOException, InterruptedException {
        for (int attempt = 0; ; attempt++) {
            int port = Ports.freeUdpAndTcp();
            List<String> all = new ArrayList<>(List.of("--listen", "127.0.0.1:" + port));
            all.addAll(List.of(args));
            Process p = command(jvmFlags, all.toArray(new String[0])).redirectError(log.toFile()).start();
            InetSocketAddress at = new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
            byte[] reply = null;
            for (int i = 0; i < 150 && reply == null && p.isAlive(); i++) {
                reply = Dns.udp(at, Dns.query(i, "ready.sluice-test.", Type.A), 100);
            }
            if (reply == null && !p.isAlive() && Files.readString(log).contains("cannot listen") && attempt < 5) {
                continue;
            }
            if (reply == null || Dns.rcode(reply) != Rcode.NOERROR) {
                p.destroyForcibly(); // a failed start must not leave a server behind the test
            }
            assertNotNull(reply, "serving over UDP: " + Files.readString(log));
            assertEquals(Rcode.NOERROR, Dns.rcode(reply), Files.readString(log));
            // The start line is written once the listeners serve, so a query can be answered first.
            Await.result("the start line", Duration.ofSeconds(10),
                    () -> Files.readString(log).contains("listening on") ? log : null);
            return new SluiceProcess(p, at, log);
        }
    }

    /** SIGTERM, then waits for the exit. */
    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }
}
