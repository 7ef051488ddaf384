package io.sluice;

import io.sluice.config.LimitSettings;
import io.sluice.config.LimitSettings.DomainLimit;
import io.sluice.config.DnstapSettings;
import io.sluice.config.Durations;
import io.sluice.config.Settings;
import io.sluice.transport.Addresses;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.xbill.DNS.Type;

/**
 * What a reload changes: the settings that apply while running, each named with its old and new
 * value (the limits, overrides, exemptions, action and dry run; the client rules; and the
 * upstreams and how they are asked, which take a new forwarding generation), and those that need
 * a restart and are kept as they were.
 *
 * @param applied         the running settings with the reload's live changes in
 * @param limitChanges    one line per live change of the limits
 * @param aclChanges      one line per change of allow-clients, acl-action and proxy-protocol-from
 * @param forwardChanges  one line per live change of the forwarding
 * @param dnstapChanges   one line per live change of dnstap
 * @param needRestart     the keys whose new values wait for a restart
 */
record Reload(Settings applied, List<String> limitChanges, List<String> aclChanges, List<String> forwardChanges,
              List<String> dnstapChanges, List<String> needRestart) {
    /** Settings components that are not settings, or that are compared apart. */
    private static final Set<String> NOT_COMPARED = Set.of("limits", "configFile", "aclIsDefault", "logLevel",
            "allowClients", "aclAction", "proxyProtocolFrom", "dnstap");
    /** Settings components a new forwarding generation puts in force (see {@link Settings#reloaded}). */
    static final Set<String> FORWARDING = Set.of("upstreams", "upstreamPolicy", "upstreamTlsCaFile", "timeout", "queryTimeout", "maxInflight",
            "upstreamSockets", "upstreamSocketLifetime", "randomizeCase", "maxFails", "healthCheckInterval",
            "healthCheck");
    /** Settings components whose key is not their name in dashes; ReloadTest checks every key against the table. */
    private static final Map<String, String> KEYS = Map.of("tcpPerClient", "max-tcp-connections-per-client",
            "tcpQueriesPerConnection", "max-tcp-queries-per-connection", "tcpMaxDuration", "max-tcp-connection-duration",
            "admin", "admin.listen", "adminTokenFile", "admin.token-file");

    static Reload between(Settings running, Settings next) {
        List<String> changes = new ArrayList<>();
        List<String> restart = new ArrayList<>();
        LimitSettings a = running.limits();
        LimitSettings b = next.limits();
        note(changes, "limits.default", a.defaultLimit(), b.defaultLimit());
        note(changes, "limits.burst", a.burst(), b.burst());
        note(changes, "action", a.action(), b.action());
        note(changes, "dry-run", a.dryRun(), b.dryRun());
        note(changes, "limits.exempt-clients", a.exemptClients(), b.exemptClients());
        Set<String> domains = new TreeSet<>(a.domains().keySet());
        domains.addAll(b.domains().keySet());
        for (String d : domains) {
            DomainLimit was = a.domains().get(d);
            DomainLimit now = b.domains().get(d);
            if (!Objects.equals(was, now)) {
                changes.add("limits.domains." + d + ": " + (was == null ? "added, " + now
                        : now == null ? "removed (was " + was + ")" : was + " -> " + now));
            }
        }
        restartIf(restart, "limits.algorithm", a.algorithm(), b.algorithm());
        restartIf(restart, "limits.max-domains", a.maxDomains(), b.maxDomains());
        restartIf(restart, "limits.janitor-interval", a.janitorInterval(), b.janitorInterval());
        restartIf(restart, "public-suffix-list", a.publicSuffixList(), b.publicSuffixList());
        restartIf(restart, "limits.per-client.queries", a.perClient().limit().queries(), b.perClient().limit().queries());
        restartIf(restart, "limits.per-client.window", a.perClient().limit().window(), b.perClient().limit().window());
        restartIf(restart, "limits.per-client.ipv4-prefix", a.perClient().ipv4Prefix(), b.perClient().ipv4Prefix());
        restartIf(restart, "limits.per-client.ipv6-prefix", a.perClient().ipv6Prefix(), b.perClient().ipv6Prefix());
        // Detection on or off needs a restart (the flood watch is in the query path or not); the
        // rest applies to the next window judged.
        restartIf(restart, "limits.flood.detect", a.flood().detect(), b.flood().detect());
        boolean floodLive = a.flood().detect() == b.flood().detect();
        if (floodLive && a.flood().detect()) { // with detection off they change nothing
            note(changes, "limits.flood.nxdomain-ratio", a.flood().nxdomainRatio(), b.flood().nxdomainRatio());
            note(changes, "limits.flood.min-answers", a.flood().minAnswers(), b.flood().minAnswers());
            note(changes, "limits.flood.budget", a.flood().fraction(), b.flood().fraction());
            note(changes, "limits.flood.pressure", a.flood().pressure(), b.flood().pressure());
            note(changes, "limits.flood.exempt-domains", a.flood().exemptDomains(), b.flood().exemptDomains());
        }
        restartIf(restart, "limits.reverse-ipv4-prefix", a.reverseIpv4Prefix(), b.reverseIpv4Prefix());
        restartIf(restart, "limits.reverse-ipv6-prefix", a.reverseIpv6Prefix(), b.reverseIpv6Prefix());
        note(changes, "log-level", running.logLevel(), next.logLevel());
        List<String> acl = new ArrayList<>();
        note(acl, "allow-clients", running.allowClients(), next.allowClients());
        note(acl, "acl-action", running.aclAction(), next.aclAction());
        note(acl, "proxy-protocol-from", running.proxyProtocolFrom(), next.proxyProtocolFrom());
        List<String> forwarding = new ArrayList<>();
        for (RecordComponent c : Settings.class.getRecordComponents()) {
            String name = c.getName();
            if (name.equals("healthCheck")) { // three keys in one value
                note(forwarding, "health-check-name", running.healthCheck().name(), next.healthCheck().name());
                note(forwarding, "health-check-type", Type.string(running.healthCheck().type()),
                        Type.string(next.healthCheck().type()));
                note(forwarding, "health-check-must-resolve", running.healthCheck().mustResolve(),
                        next.healthCheck().mustResolve());
            } else if (FORWARDING.contains(name)) {
                note(forwarding, key(name), value(c, running), value(c, next));
            } else if (name.equals("cache") || name.equals("backend")) { // sections: each key apart
                Object was = value(c, running);
                Object now = value(c, next);
                for (RecordComponent part : c.getType().getRecordComponents()) {
                    String key = name.equals("cache") ? "cache." + key(part.getName())
                            : part.getName().equals("kind") ? "backend" : key(part.getName());
                    restartIf(restart, key, value(part, was), value(part, now));
                }
            } else if (!NOT_COMPARED.contains(name)) {
                restartIf(restart, key(name), value(c, running), value(c, next));
            }
        }
        // dnstap on or off needs a restart (it is in the query path or not), as does its queue;
        // where it writes, as whom and which messages apply at once.
        DnstapSettings da = running.dnstap();
        DnstapSettings db = next.dnstap();
        List<String> dnstap = new ArrayList<>();
        restartIf(restart, "dnstap.socket", da.on(), db.on());
        restartIf(restart, "dnstap.queue-size", da.queueSize(), db.queueSize());
        boolean dnstapLive = da.on() && db.on();
        if (dnstapLive) {
            note(dnstap, "dnstap.socket", da.socket(), db.socket());
            note(dnstap, "dnstap.identity", da.identity(), db.identity());
            note(dnstap, "dnstap.version", da.version(), db.version());
            note(dnstap, "dnstap.messages", da.messages(), db.messages());
        }
        DnstapSettings dnstapApplied = dnstapLive
                ? new DnstapSettings(db.socket(), db.identity(), db.version(), da.queueSize(), db.messages()) : da;
        LimitSettings merged = new LimitSettings(b.defaultLimit(), a.algorithm(), b.burst(), b.action(), b.dryRun(),
                a.maxDomains(), a.janitorInterval(), a.publicSuffixList(), b.domains(), b.exemptClients(), b.origins(),
                a.reverseIpv4Prefix(), a.reverseIpv6Prefix(), a.perClient(), floodLive ? b.flood() : a.flood());
        return new Reload(running.reloaded(next, merged, dnstapApplied), changes, acl, forwarding, dnstap, restart);
    }

    private static void note(List<String> changes, String key, Object was, Object now) {
        if (!Objects.equals(was, now)) {
            changes.add(key + ": " + text(was) + " -> " + text(now));
        }
    }

    /** A value as the configuration file writes it: addresses as HOST:PORT, durations as 2s. */
    private static String text(Object value) {
        if (value == null) {
            return "unset";
        }
        if (value instanceof List<?> list) {
            return list.isEmpty() ? "none" : list.stream().map(Reload::text).collect(Collectors.joining(", "));
        }
        if (value instanceof InetSocketAddress a) {
            return Addresses.text(a);
        }
        if (value instanceof Duration d) {
            return Durations.text(d);
        }
        return String.valueOf(value);
    }

    private static void restartIf(List<String> restart, String key, Object was, Object now) {
        if (!Objects.equals(was, now)) {
            restart.add(key);
        }
    }

    /**
     * The key of a settings component: its name in dashes ({@code upstreamSockets} is
     * {@code upstream-sockets}) but where {@link #KEYS} says otherwise.
     */
    private static String key(String component) {
        String key = KEYS.get(component);
        return key != null ? key : component.replaceAll("([a-z])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT);
    }

    private static Object value(RecordComponent c, Object s) {
        try {
            return c.getAccessor().invoke(s);
        } catch (IllegalAccessException | InvocationTargetException e) {
            throw new IllegalStateException(e);
        }
    }
}
