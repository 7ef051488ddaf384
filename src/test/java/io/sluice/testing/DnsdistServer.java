package io.sluice.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.xbill.DNS.Type;

/**
 * A real {@code dnsdist} (Debian's package) on a free loopback port, UDP and TCP, forwarding to
 * one backend with the PROXY protocol's version 2 header, as an operator puts dnsdist in front of
 * sluice. Without dnsdist installed the tests that need it are skipped, with one line saying so;
 * with {@code SLUICE_REQUIRE_DNSDIST} set (as {@code .ci/run} does) they fail instead.
 */
public record DnsdistServer(Process process, InetSocketAddress address) implements AutoCloseable {
    private static final Path DNSDIST = Path.of("/usr/bin/dnsdist");

    /** Starts dnsdist in {@code dir}, in front of {@code backend} with PROXY v2, and waits until it answers. */
    public static DnsdistServer startProxying(Path dir, InetSocketAddress backend) throws IOException, InterruptedException {
        Prerequisite.assume("dnsdist tests", Files.isExecutable(DNSDIST),
                DNSDIST + " is not installed (apt-get install dnsdist)", "SLUICE_REQUIRE_DNSDIST");
        for (int attempt = 1; ; attempt++) {
            int port = Ports.freeUdpAndTcp();
            Path conf = Files.writeString(dir.resolve("dnsdist.lua"), String.join("\n",
                    "setSecurityPollSuffix(\"\")",
                    "setLocal(\"127.0.0.1:" + port + "\")",
                    "newServer({address=\"127.0.0.1:" + backend.getPort() + "\", useProxyProtocol=true})", ""));
            Process p = new ProcessBuilder(DNSDIST.toString(), "--supervised", "--disable-syslog", "-C", conf.toString())
                    .redirectErrorStream(true).redirectOutput(dir.resolve("dnsdist.out").toFile()).start();
            InetSocketAddress at = new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
            if (ServerProcesses.answers(p, at, Dns.query(1, "ready.example.", Type.A))) {
                return new DnsdistServer(p, at);
            }
            p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            if (attempt == 3) {
                fail("dnsdist did not start: " + Files.readString(dir.resolve("dnsdist.out")));
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        ServerProcesses.stop(process);
    }
}
