package io.sluice.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.xbill.DNS.Type;

/**
 * A real {@code unbound} (Debian's package) on a free loopback port, UDP and TCP, serving the signed
 * {@code diff.test.} zone of {@code src/test/resources/zones} from its auth-zone, as
 * {@link NsdServer} serves it from nsd: a second server's way of answering the same data. Without
 * unbound installed the tests that need it are skipped, with one line saying so; with
 * {@code SLUICE_REQUIRE_UNBOUND} set (as {@code .ci/run} does) they fail instead.
 */
public final class UnboundServer implements AutoCloseable {
    private static final Path UNBOUND = Path.of("/usr/sbin/unbound");

    private final Process process;
    private final InetSocketAddress address;

    private UnboundServer(Process process, InetSocketAddress address) {
        this.process = process;
        this.address = address;
    }

    /** Skips (or, when unbound is required, fails) the calling test unless unbound is installed. */
    public static void assumeInstalled() {
        Prerequisite.assume("unbound tests", Files.isExecutable(UNBOUND),
                UNBOUND + " is not installed (apt-get install unbound)", "SLUICE_REQUIRE_UNBOUND");
    }

    /** Starts unbound in {@code dir}, a directory of its own, and waits until it answers from the zone. */
    public static UnboundServer start(Path dir) throws IOException, InterruptedException {
        assumeInstalled();
        try (InputStream zone = UnboundServer.class.getResourceAsStream("/zones/diff.test.zone");
             InputStream conf = UnboundServer.class.getResourceAsStream("/unbound/unbound.conf.in")) {
            Files.copy(zone, dir.resolve("diff.test.zone"));
            String template = new String(conf.readAllBytes(), StandardCharsets.UTF_8);
            for (int attempt = 1; ; attempt++) {
                int port = Ports.freeUdpAndTcp();
                Path file = dir.resolve("unbound.conf");
                Files.writeString(file, template.replace("@PORT@", String.valueOf(port))
                        .replace("@DIR@", dir.toAbsolutePath().toString()));
                Process p = new ProcessBuilder(UNBOUND.toString(), "-d", "-c", file.toString())
                        .redirectErrorStream(true).redirectOutput(dir.resolve("unbound.out").toFile()).start();
                InetSocketAddress at = new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
                if (ServerProcesses.answers(p, at, Dns.query(1, NsdServer.ZONE, Type.SOA))) {
                    return new UnboundServer(p, at);
                }
                p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                if (attempt == 3) {
                    fail("unbound did not start: " + Files.readString(dir.resolve("unbound.out"))
                            + (Files.exists(dir.resolve("unbound.log")) ? Files.readString(dir.resolve("unbound.log")) : ""));
                }
            }
        }
    }

    /**
     * Starts unbound in {@code dir} as a resolver that forwards every name under
     * {@code example.com.} to {@code to} (a sluice, say), over TCP when {@code overTcp}
     * ({@code forward-tcp-upstream}), caching nothing, as a site's resolver in front of sluice would.
     */
    public static UnboundServer forwarding(Path dir, InetSocketAddress to, boolean overTcp)
            throws IOException, InterruptedException {
        assumeInstalled();
        for (int attempt = 1; ; attempt++) {
            int port = Ports.freeUdpAndTcp();
            Path file = dir.resolve("unbound.conf");
            Files.writeString(file, String.join("\n",
                    "server:",
                    "    interface: 127.0.0.1@" + port,
                    "    do-ip6: no",
                    "    do-daemonize: no",
                    "    username: \"\"",
                    "    chroot: \"\"",
                    "    directory: \"" + dir.toAbsolutePath() + "\"",
                    "    pidfile: \"" + dir.toAbsolutePath() + "/unbound.pid\"",
                    "    use-syslog: no",
                    "    logfile: \"" + dir.toAbsolutePath() + "/unbound.log\"",
                    "    num-threads: 1",
                    "    so-reuseport: no",
                    "    access-control: 127.0.0.0/8 allow",
                    "    do-not-query-localhost: no",
                    "    module-config: \"iterator\"",
                    "    msg-cache-size: 0",
                    "    rrset-cache-size: 0",
                    "    qname-minimisation: no",
                    "    outbound-msg-retry: 1",
                    "forward-zone:",
                    "    name: \"example.com.\"",
                    "    forward-addr: 127.0.0.1@" + to.getPort(),
                    "    forward-tcp-upstream: " + (overTcp ? "yes" : "no"),
                    "remote-control:",
                    "    control-enable: no", ""));
            Process p = new ProcessBuilder(UNBOUND.toString(), "-d", "-c", file.toString())
                    .redirectErrorStream(true).redirectOutput(dir.resolve("unbound.out").toFile()).start();
            InetSocketAddress at = new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
            if (ServerProcesses.answers(p, at, Dns.query(1, "localhost.", Type.A))) { // its own local zone
                return new UnboundServer(p, at);
            }
            p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            if (attempt == 3) {
                fail("unbound did not start: " + Files.readString(dir.resolve("unbound.out")));
            }
        }
    }

    public InetSocketAddress address() {
        return address;
    }

    public String hostPort() {
        return "127.0.0.1:" + address.getPort();
    }

    @Override
    public void close() throws InterruptedException {
        ServerProcesses.stop(process);
    }
}
