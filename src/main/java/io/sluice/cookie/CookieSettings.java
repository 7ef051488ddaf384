package io.sluice.cookie;

import io.sluice.config.Setting;
import io.sluice.config.Setting.Applied;
import io.sluice.config.SettingSection;
import io.sluice.config.SettingTable;
import io.sluice.config.Values;
import java.nio.file.Path;
import java.util.List;

/** DNS cookies' settings. */
public final class CookieSettings implements SettingSection {
    public static final Setting<Boolean> ENABLED = Setting.one("cookies.enabled", null, null, "true", true,
            Values::bool, Applied.RESTART,
            "Answer DNS cookies (RFC 7873, RFC 9018's server cookies), as BIND does by default: a query's COOKIE is"
                    + " answered by sluice and never sent upstream; a valid server cookie proves a UDP client's address"
                    + " (limits.verified-share). Off: COOKIE options go upstream as sent.");
    public static final Setting<Path> SECRET_FILE = Setting.one("cookies.secret-file", null, null,
            "none (a random secret per start)", null, SettingTable::readable, Applied.RESTART,
            "A file holding the 16-octet server cookie secret as 32 hex digits, as BIND's cookie-secret and"
                    + " Unbound's cookie-secret take it; servers behind one address share it. Read again at each"
                    + " reload; the secret it replaces is accepted for an hour more. The path takes a restart.");

    @Override
    public List<Setting<?>> settings() {
        return List.of(ENABLED, SECRET_FILE);
    }
}
