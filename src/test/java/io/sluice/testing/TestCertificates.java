package io.sluice.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** TLS certificates for tests, made by the openssl command, as an operator makes a self-signed one. */
public final class TestCertificates {
    private TestCertificates() {
    }

    /**
     * A self-signed EC certificate for 127.0.0.1 whose subject is CN={@code cn}, and its PKCS#8 key:
     * {@code cert.pem} and {@code key.pem} in {@code dir}, replaced if there.
     *
     * @return the certificate's path, then the key's
     */
    public static Path[] selfSigned(Path dir, String cn) throws IOException, InterruptedException {
        return selfSigned(dir, cn, 2);
    }

    /** {@link #selfSigned(Path, String)}, valid {@code days} days. */
    public static Path[] selfSigned(Path dir, String cn, int days) throws IOException, InterruptedException {
        Path cert = dir.resolve("cert.pem");
        Path key = dir.resolve("key.pem");
        Process p = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key.toString(), "-out", cert.toString(),
                "-days", String.valueOf(days), "-subj", "/CN=" + cn, "-addext", "subjectAltName=IP:127.0.0.1")
                .redirectErrorStream(true).start();
        String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0, "openssl: " + said);
        return new Path[] {cert, key};
    }
}
