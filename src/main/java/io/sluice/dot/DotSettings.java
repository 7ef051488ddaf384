package io.sluice.dot;

import io.sluice.config.Setting;
import io.sluice.config.Setting.Applied;
import io.sluice.config.SettingSection;
import io.sluice.config.SettingTable;
import java.net.InetSocketAddress;
import java.util.List;

/** DNS over TLS's settings: where it listens (the certificate is the server's, shared). */
public final class DotSettings implements SettingSection {
    public static final Setting<List<InetSocketAddress>> TLS_LISTEN = Setting.list("tls-listen", "--tls-listen",
            "HOST:PORT", "none", List.of(), v -> SettingTable.addresses(v, SettingTable.DOT_PORT, true), Applied.RESTART,
            "Serve DNS over TLS (RFC 7858) here, port 853 unless given; needs tls-cert-file and tls-key-file; repeatable.");

    @Override
    public List<Setting<?>> settings() {
        return List.of(TLS_LISTEN);
    }

    @Override
    public List<Setting<List<InetSocketAddress>>> tlsListeners() {
        return List.of(TLS_LISTEN);
    }
}
