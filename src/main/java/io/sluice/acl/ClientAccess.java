package io.sluice.acl;

import io.netty.channel.EventLoop;
import io.sluice.config.Reloadable;
import io.sluice.config.Setting;
import io.sluice.config.Settings;
import io.sluice.metrics.Registry;
import io.sluice.pipeline.Module;
import io.sluice.pipeline.Stage;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * The client rules as a module: {@code allow-clients}, {@code acl-action},
 * {@code proxy-protocol-from} and {@code connection-exempt-clients} made into the rules the loops and the TCP listener read (and a
 * reload replaces), an {@link AccessControl} stage on each loop, and the log of denied clients.
 */
public final class ClientAccess implements Module, Reloadable {
    private final ClientRules rules;
    private final LongAdder denied;
    private final DeniedLog log;
    private final String description;

    public ClientAccess(Settings settings, Registry meters) {
        this.rules = new ClientRules(settings);
        this.denied = meters.counter("acl_denied", "Queries (and TCP connections) from clients outside allow-clients.");
        this.log = new DeniedLog(denied);
        List<?> allowed = settings.allowClients();
        List<?> proxies = settings.proxyProtocolFrom();
        this.description = "clients " + (settings.aclIsDefault() ? "private networks"
                : allowed.size() == 1 ? allowed.get(0).toString() : allowed.size() + " networks")
                + " (else " + settings.aclAction() + ")"
                + (proxies.isEmpty() ? "" : "; PROXY v2 from " + proxies.size() + (proxies.size() == 1 ? " network" : " networks"));
    }

    /** For the startup line: who may ask, and through which proxies, as started. */
    public String describe() {
        return description;
    }

    /** The rules in force, which the TCP listener reads too and a reload replaces. */
    public ClientRules rules() {
        return rules;
    }

    @Override
    public Stage stage(EventLoop loop) {
        return new AccessControl(rules, denied, log);
    }

    @Override
    public void start() {
        log.start();
    }

    @Override
    public void close() {
        log.close();
    }

    /** A reload's client rules: allow-clients, acl-action, proxy-protocol-from and connection-exempt-clients, replaced together. */
    @Override
    public Setting.Applied part() {
        return Setting.Applied.CLIENT_RULES;
    }

    @Override
    public void apply(Settings next) {
        rules.replace(next);
    }
}
