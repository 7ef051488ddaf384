package io.sluice.doh;

import io.sluice.config.Setting;
import io.sluice.config.Setting.Applied;
import io.sluice.config.SettingSection;
import io.sluice.config.SettingTable;
import java.net.InetSocketAddress;
import java.util.List;

/** DNS over HTTPS's settings: where it listens (the certificate is the server's, shared). */
public final class DohSettings implements SettingSection {
    /** HTTPS's port. */
    static final int PORT = 443;

    public static final Setting<List<InetSocketAddress>> HTTPS_LISTEN = Setting.list("https-listen", "--https-listen",
            "HOST:PORT", "none", List.of(), v -> SettingTable.addresses(v, PORT, true), Applied.RESTART,
            "Serve DNS over HTTPS (RFC 8484) at /dns-query here, port 443 unless given; HTTP/2 and HTTP/1.1;"
                    + " needs tls-cert-file and tls-key-file; repeatable.");

    @Override
    public List<Setting<?>> settings() {
        return List.of(HTTPS_LISTEN);
    }

    @Override
    public List<Setting<List<InetSocketAddress>>> tlsListeners() {
        return List.of(HTTPS_LISTEN);
    }
}
