package io.sluice.testing;

import io.sluice.config.ConfigException;
import io.sluice.config.ConfigFile;
import io.sluice.config.Settings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Settings for tests that need no running server: an upstream named (never asked) and the test's own over the defaults. */
public final class TestSettings {
    private static final String UPSTREAM = "127.0.0.1:53";

    private TestSettings() {
    }

    /** Alternating key and value over the defaults. */
    public static Settings of(String... keyValues) throws ConfigException {
        Settings.Builder b = new Settings.Builder();
        b.set("upstreams", List.of(UPSTREAM));
        for (int i = 0; i < keyValues.length; i += 2) {
            b.set(keyValues[i], List.of(keyValues[i + 1]));
        }
        return b.build();
    }

    /** {@code yaml} written to {@code dir}/sluice.yml and read as a configuration file. */
    public static Settings fromYaml(Path dir, String yaml) throws ConfigException, IOException {
        Path f = dir.resolve("sluice.yml");
        Files.writeString(f, yaml);
        Settings.Builder b = new Settings.Builder();
        ConfigFile.apply(f, b);
        b.set("upstreams", List.of(UPSTREAM));
        return b.build();
    }
}
