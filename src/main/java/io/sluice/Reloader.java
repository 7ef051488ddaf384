package io.sluice;

import io.sluice.acl.ClientRules;
import io.sluice.config.ConfigException;
import io.sluice.config.Setting.Applied;
import io.sluice.config.SettingTable;
import io.sluice.config.Settings;
import io.sluice.config.SettingsSource;
import io.sluice.dnstap.Dnstap;
import io.sluice.forward.Forwarding;
import io.sluice.frontend.Frontend;
import io.sluice.limit.Limits;
import io.sluice.metrics.Registry;
import io.sluice.transport.ServerTls;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import javax.net.ssl.SSLException;

/**
 * Puts a reload in force: reads the settings again, works out what changed ({@link Reload}), and
 * hands each part what it takes while running. Holds the settings as started with what reloads
 * changed since. Reloads come from the admin API and from SIGHUP, on their own threads: one at a
 * time, under this object's lock.
 */
final class Reloader {
    private final Limits limits;
    private final Forwarding forwarding;
    private final ClientRules clientRules;
    /** dnstap, or null when it is off. */
    private final Dnstap dnstap;
    private final Frontend frontend;
    private final LongAdder reloads;
    private final LongAdder reloadFailures;
    private volatile Settings settings;
    /** Reads the settings again: the file, then the same flags. Set after start, read by the admin and signal threads. */
    private volatile SettingsSource source = () -> {
        throw new ConfigException("nothing to reload: sluice was started without --config");
    };

    Reloader(Settings started, Registry meters, Limits limits, Forwarding forwarding, ClientRules clientRules,
             Dnstap dnstap, Frontend frontend) {
        this.settings = started;
        this.limits = limits;
        this.forwarding = forwarding;
        this.clientRules = clientRules;
        this.dnstap = dnstap;
        this.frontend = frontend;
        this.reloads = meters.counter("reloads", "Reloads of the configuration that were put in force.");
        this.reloadFailures = meters.counter("reload_failures", "Reloads refused: the file was invalid; nothing changed.");
    }

    /** As started, with what reloads changed since. */
    Settings settings() {
        return settings;
    }

    /** Where {@link #reload} reads from. */
    void readFrom(SettingsSource source) {
        this.source = source;
    }

    /**
     * Reads the configuration again and puts in force what can change while running: limits,
     * overrides, exemptions, action, dry run, the client rules, and the upstreams with their
     * timeouts and health checks. What needs a restart is kept as it is and named in the result. One reload at a time.
     *
     * @return one line per change
     * @throws ConfigException when the file is invalid (naming file, line and key); nothing changes then
     */
    synchronized List<String> reload() throws ConfigException {
        Settings next;
        try {
            next = source.read();
        } catch (ConfigException e) {
            reloadFailures.increment();
            throw e;
        }
        Reload r = Reload.between(settings, next);
        ServerTls.Contexts tls = null;
        if (!settings.tlsListen().isEmpty() || !settings.httpsListen().isEmpty()) {
            // certificates are renewed in place: read again at every reload
            try {
                tls = ServerTls.Contexts.load(settings.tlsCertFile(), settings.tlsKeyFile());
            } catch (SSLException e) {
                reloadFailures.increment();
                throw new ConfigException("tls-cert-file, tls-key-file: " + ServerTls.whatIsWrong(e));
            }
        }
        try {
            if (!r.changesTo(Applied.LIMITS).isEmpty()) {
                limits.check(r.applied().limits()); // before anything changes
            }
            if (!r.changesTo(Applied.FORWARDING).isEmpty()) {
                forwarding.switchTo(r.applied());
            }
            if (!r.changesTo(Applied.LIMITS).isEmpty()) {
                limits.reload(r.applied().limits()); // checked above: it takes them
            }
            if (!r.changesTo(Applied.CLIENT_RULES).isEmpty()) {
                clientRules.replace(next.allowClients(), next.aclAction() == SettingTable.AclAction.DROP,
                        next.proxyProtocolFrom());
            }
        } catch (ConfigException e) {
            reloadFailures.increment();
            throw e;
        } catch (InterruptedException | RuntimeException e) {
            reloadFailures.increment();
            throw new ConfigException("upstreams: cannot use them: " + e.getMessage());
        }
        LogLevel.apply(next.logLevel());
        if (!r.changesTo(Applied.DNSTAP).isEmpty()) {
            dnstap.reconfigure(r.applied().dnstap());
        }
        if (tls != null) {
            frontend.useTls(tls);
        }
        settings = r.applied();
        reloads.increment();
        List<String> all = new ArrayList<>();
        for (Applied part : Applied.values()) {
            all.addAll(r.changesTo(part));
        }
        r.needRestart().forEach(k -> all.add(k + ": needs a restart, kept as it was"));
        if (tls != null) {
            all.add("tls-cert-file: read again, for new TLS connections");
        }
        return all;
    }
}
