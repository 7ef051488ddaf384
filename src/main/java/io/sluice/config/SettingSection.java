package io.sluice.config;

import java.net.InetSocketAddress;
import java.util.List;

/**
 * A module's own settings, declared in the module's package. {@link SettingTable} lists every
 * section named in {@code META-INF/services/io.sluice.config.SettingSection} (one line per module,
 * in the order {@code --help} prints them) after the server's own keys, so the flags, the file,
 * {@code --help}, the reload plan and {@code docs/configuration.md} know a module's keys as they
 * know the rest. A section's values are read with {@link Settings#value}.
 */
public interface SettingSection {
    /** Its settings, in the order {@code --help} lists them; no key is another section's. */
    List<Setting<?>> settings();

    /**
     * Those of its settings that are addresses a TLS front end listens on: each needs
     * {@code tls-cert-file} and {@code tls-key-file}, and a port that no other listener has.
     */
    default List<Setting<List<InetSocketAddress>>> tlsListeners() {
        return List.of();
    }
}
