package io.sluice.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** conf/sluice.service is a unit systemd accepts as it is, and keeps what running as a service needs. */
class SystemdUnitTest {
    private static final Path UNIT = Path.of("conf/sluice.service");
    private static final Path ANALYZE = Path.of("/usr/bin/systemd-analyze");

    @Test
    void systemdAnalyzeVerifiesTheUnitWithoutAWord() throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(ANALYZE), "systemd-analyze is not installed");
        Process p = new ProcessBuilder(ANALYZE.toString(), "verify", UNIT.toString()).redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "systemd-analyze verify did not finish");
        String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), said);
        assertEquals("", said.strip(), "systemd-analyze verify had something to say");
    }

    @Test
    void theUnitBindsPort53WithoutRootAndReloadsWithSighup() throws Exception {
        String unit = Files.readString(UNIT);
        for (String line : new String[] {"Type=notify", "DynamicUser=yes", "AmbientCapabilities=CAP_NET_BIND_SERVICE",
                "NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes",
                "StateDirectory=sluice", "ExecReload=/bin/kill -HUP $MAINPID", "RestartPreventExitStatus=2",
                "ExecReload=/usr/bin/java -Xmx128m -jar /opt/sluice/sluice.jar --config /etc/sluice/sluice.yml --check-config"}) {
            assertTrue(unit.lines().anyMatch(line::equals), "missing: " + line);
        }
        assertTrue(unit.indexOf("--check-config") < unit.indexOf("ExecReload=/bin/kill"),
                "the file is checked before sluice is signalled: a failed check stops the reload");
    }
}
