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
 * A real PowerDNS Authoritative (Debian's {@code pdns-server} with {@code pdns-backend-bind}) on a
 * free loopback port, serving {@code geo.example.} with LUA records that answer by the client's
 * subnet (RFC 7871 Client Subnet, else the source address): {@code who TXT} names the subnet it saw
 * ({@code ecswho}), and {@code www A} is 192.0.2.1 for 127.0.1.0/24, 192.0.2.2 for anyone else
 * ({@code bestwho}), each with the scope of the subnet it was given. Without pdns installed the
 * tests that need it are skipped; with {@code SLUICE_REQUIRE_PDNS} set (as {@code .ci/run} does)
 * they fail instead.
 */
public final class PowerDnsServer implements AutoCloseable {
    public static final String ZONE = "geo.example.";
    private static final Path PDNS = Path.of("/usr/sbin/pdns_server");

    private final Process process;
    private final InetSocketAddress address;

    private PowerDnsServer(Process process, InetSocketAddress address) {
        this.process = process;
        this.address = address;
    }

    public static void assumeInstalled() {
        Prerequisite.assume("PowerDNS tests", Files.isExecutable(PDNS),
                PDNS + " is not installed (apt-get install pdns-server pdns-backend-bind)", "SLUICE_REQUIRE_PDNS");
    }

    /** Starts pdns_server in {@code dir}, a directory of its own, and waits until it answers. */
    public static PowerDnsServer start(Path dir) throws IOException, InterruptedException {
        assumeInstalled();
        Files.writeString(dir.resolve("geo.example.zone"), String.join("\n",
                "$ORIGIN geo.example.",
                "$TTL 60",
                "@ IN SOA ns1 host 1 3600 600 86400 60",
                "@ IN NS ns1",
                "ns1 IN A 127.0.0.1",
                "who IN LUA TXT \"ecswho:toString()\"",
                "www IN LUA A \";if bestwho:toString():find('127.0.1.', 1, true) then return '192.0.2.1' end"
                        + " return '192.0.2.2'\"",
                ""));
        Files.writeString(dir.resolve("named.conf"),
                "zone \"geo.example\" { type master; file \"" + dir.toAbsolutePath() + "/geo.example.zone\"; };\n");
        for (int attempt = 1; ; attempt++) {
            int port = Ports.freeUdpAndTcp();
            Files.writeString(dir.resolve("pdns.conf"), String.join("\n",
                    "launch=bind",
                    "bind-config=" + dir.toAbsolutePath() + "/named.conf",
                    "local-address=127.0.0.1",
                    "local-port=" + port,
                    "enable-lua-records=yes",
                    "edns-subnet-processing=yes",
                    "socket-dir=" + dir.toAbsolutePath(),
                    "guardian=no",
                    "daemon=no",
                    "disable-syslog=yes",
                    "loglevel=3",
                    "query-cache-ttl=0",
                    "cache-ttl=0",
                    ""));
            Process p = new ProcessBuilder(PDNS.toString(), "--config-dir=" + dir.toAbsolutePath())
                    .redirectErrorStream(true).redirectOutput(dir.resolve("pdns.out").toFile()).start();
            InetSocketAddress at = new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
            if (ServerProcesses.answers(p, at, Dns.query(1, ZONE, Type.SOA))) {
                return new PowerDnsServer(p, at);
            }
            p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            if (attempt == 3) {
                fail("pdns_server did not start: " + Files.readString(dir.resolve("pdns.out")));
            }
        }
    }

    public String hostPort() {
        return "127.0.0.1:" + address.getPort();
    }

    public InetSocketAddress address() {
        return address;
    }

    @Override
    public void close() throws InterruptedException {
        ServerProcesses.stop(process);
    }
}
