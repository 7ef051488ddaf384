package io.sluice.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * conf/sluice.sh, the command the package installs: the JVM options it passes, by the JDK it runs,
 * told apart by a stand-in {@code java} that prints its arguments, in a JDK's layout.
 */
class LauncherTest {
    private static final Path LAUNCHER = Path.of("conf/sluice.sh");

    @TempDir
    Path dir;

    @Test
    void fromJdk23OnUnsafesMemoryAccessIsAllowedBeforeJavaOpts() throws Exception {
        assertEquals("--sun-misc-unsafe-memory-access=allow -Xmx64m -jar /opt/s.jar --version",
                run(jdk("25.0.3"), "-Xmx64m", "--version"));
        assertEquals("--sun-misc-unsafe-memory-access=allow -jar /opt/s.jar --help", run(jdk("23"), "", "--help"));
    }

    @Test
    void jdk17AndAJdkWithoutAReleaseFileGetNoSuchOption() throws Exception {
        assertEquals("-Xmx64m -jar /opt/s.jar --version", run(jdk("17.0.15"), "-Xmx64m", "--version"));
        assertEquals("-jar /opt/s.jar --version", run(jdk(null), "", "--version"));
    }

    /** A JDK home whose release file says {@code version} (none when null), its java printing its arguments. */
    private Path jdk(String version) throws Exception {
        Path home = Files.createDirectories(dir.resolve("jdk-" + version));
        Path java = Files.createDirectories(home.resolve("bin")).resolve("java");
        Files.writeString(java, "#!/bin/sh\necho \"$@\"\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        if (version != null) {
            Files.writeString(home.resolve("release"), "IMPLEMENTOR=\"test\"\nJAVA_VERSION=\"" + version + "\"\n");
        }
        return java;
    }

    private static String run(Path java, String javaOpts, String arg) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(LAUNCHER.toString(), arg).redirectErrorStream(true);
        Map<String, String> env = pb.environment();
        env.put("JAVA", java.toString());
        env.put("JAVA_OPTS", javaOpts);
        env.put("SLUICE_JAR", "/opt/s.jar");
        Process p = pb.start();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the launcher exits");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertEquals(0, p.exitValue(), out);
        return out;
    }
}
