package io.sluice.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The DNS over HTTPS clients of the tests, as Debian ships them: {@code kdig} (knot-dnsutils),
 * {@code dig} (bind9-dnsutils, 9.18 and later) and {@code curl}. Missing, their tests are skipped,
 * or fail with {@code SLUICE_REQUIRE_DOH_CLIENTS} set (as {@code .ci/run} sets it).
 */
public final class DohClients {
    private DohClients() {
    }

    /** Skips (or fails) the calling test unless kdig, dig and curl are installed. */
    public static void assumeInstalled() {
        boolean present = Files.isExecutable(Path.of("/usr/bin/kdig")) && Files.isExecutable(Path.of("/usr/bin/dig"))
                && Files.isExecutable(Path.of("/usr/bin/curl"));
        Prerequisite.assume("DNS over HTTPS tests", present,
                "kdig, dig and curl are not installed (apt-get install knot-dnsutils bind9-dnsutils curl)",
                "SLUICE_REQUIRE_DOH_CLIENTS");
    }

    /** What a command printed (standard output and error together) and its exit code. */
    public record Run(int exit, String output) {
    }

    /** Runs {@code command}, at most 30 s. */
    public static Run run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), String.join(" ", command) + " did not end");
        return new Run(p.exitValue(), out);
    }

    /**
     * curl against {@code url} with {@code extra} options, not checking the certificate: the
     * response's status line and headers, then (after a line {@code --body--}) its body in hex.
     */
    public static Run curl(Path dir, String url, String... extra) throws IOException, InterruptedException {
        Path body = dir.resolve("curl-body.bin");
        Files.deleteIfExists(body);
        List<String> c = new ArrayList<>(List.of("curl", "-sk", "-D", "-", "-o", body.toString()));
        c.addAll(List.of(extra));
        c.add(url);
        Run r = run(c.toArray(String[]::new));
        byte[] b = Files.exists(body) ? Files.readAllBytes(body) : new byte[0];
        return new Run(r.exit(), r.output() + "--body--\n" + java.util.HexFormat.of().formatHex(b));
    }
}
