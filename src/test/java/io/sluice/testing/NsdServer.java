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
 * A real {@code nsd} (Debian's package) on a free loopback port, UDP and TCP, serving the signed
 * {@code diff.test.} zone of {@code src/test/resources/nsd} and giving AXFR and IXFR to loopback.
 * Without nsd installed the tests that need it are skipped, with one line saying so; with
 * {@code SLUICE_REQUIRE_NSD} set (as {@code .ci/run} does) they fail instead.
 */
public final class NsdServer implements AutoCloseable {
    public static final String ZONE = "diff.test.";
    private static final Path NSD = Path.of("/usr/sbin/nsd");

    private final Process process;
    private final InetSocketAddress address;
    private final InetSocketAddress tlsAddress;

    private NsdServer(Process process, InetSocketAddress address, InetSocketAddress tlsAddress) {
        this.process = process;
        this.address = address;
        this.tlsAddress = tlsAddress;
    }

    /** Skips (or, when nsd is required, fails) the calling test unless nsd is installed. */
    public static void assumeInstalled() {
        Prerequisite.assume("nsd tests", Files.isExecutable(NSD), NSD + " is not installed (apt-get install nsd)",
                "SLUICE_REQUIRE_NSD");
    }

    /** Starts nsd in {@code dir}, a directory of its own, and waits until it answers. */
    public static NsdServer start(Path dir) throws IOException, InterruptedException {
        return start(dir, null, null);
    }

    /**
     * {@link #start(Path)}, serving DNS over TLS as well on a port of its own ({@link #tlsAddress}),
     * with the PEM certificate {@code cert} and key {@code key}.
     */
    public static NsdServer startWithTls(Path dir, Path cert, Path key) throws IOException, InterruptedException {
        return start(dir, cert, key);
    }

    private static NsdServer start(Path dir, Path cert, Path key) throws IOException, InterruptedException {
        assumeInstalled();
        try (InputStream zone = NsdServer.class.getResourceAsStream("/zones/diff.test.zone");
             InputStream conf = NsdServer.class.getResourceAsStream("/nsd/nsd.conf.in")) {
            Files.copy(zone, dir.resolve("diff.test.zone"));
            String template = new String(conf.readAllBytes(), StandardCharsets.UTF_8);
            for (int attempt = 1; ; attempt++) {
                int port = Ports.freeUdpAndTcp();
                int tlsPort = cert == null ? 0 : Ports.freeUdpAndTcp();
                String tls = cert == null ? "" : "    ip-address: 127.0.0.1@" + tlsPort + "\n    tls-port: " + tlsPort
                        + "\n    tls-service-pem: \"" + cert + "\"\n    tls-service-key: \"" + key + "\"";
                Path file = dir.resolve("nsd.conf");
                Files.writeString(file, template.replace("@PORT@", String.valueOf(port))
                        .replace("@DIR@", dir.toAbsolutePath().toString()).replace("@TLS@", tls));
                Process p = new ProcessBuilder(NSD.toString(), "-d", "-c", file.toString())
                        .redirectErrorStream(true).redirectOutput(dir.resolve("nsd.out").toFile()).start();
                InetSocketAddress at = new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
                if (ServerProcesses.answers(p, at, Dns.query(1, ZONE, Type.SOA))) {
                    return new NsdServer(p, at, cert == null ? null
                            : new InetSocketAddress(InetAddress.getLoopbackAddress(), tlsPort));
                }
                p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                if (attempt == 3) {
                    fail("nsd did not start: " + Files.readString(dir.resolve("nsd.out"))
                            + readOrEmpty(dir.resolve("nsd.log")));
                }
            }
        }
    }

    private static String readOrEmpty(Path p) throws IOException {
        return Files.exists(p) ? Files.readString(p) : "";
    }

    public InetSocketAddress address() {
        return address;
    }

    public String hostPort() {
        return "127.0.0.1:" + address.getPort();
    }

    /** Where it serves DNS over TLS, if started with {@link #startWithTls}. */
    public InetSocketAddress tlsAddress() {
        return tlsAddress;
    }

    @Override
    public void close() throws InterruptedException {
        ServerProcesses.stop(process); // SIGTERM: nsd stops its children and exits
    }
}
