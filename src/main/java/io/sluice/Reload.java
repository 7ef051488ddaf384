package io.sluice;

import io.sluice.config.LimitSettings;
import io.sluice.config.LimitSettings.DomainLimit;
import io.sluice.config.Settings;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a reload changes: the settings that apply while running (the limits, overrides,
 * exemptions, action and dry run), each named with its old and new value, and those that need a
 * restart and are kept as they were.
 *
 * @param applied      the running settings with the reload's live changes in
 * @param limitChanges one line per live change
 * @param needRestart  the keys whose new values wait for a restart
 */
record Reload(Settings applied, List<String> limitChanges, List<String> needRestart) {
    /** Settings components that are not settings, or that are compared apart. */
    private static final Set<String> NOT_COMPARED = Set.of("limits", "configFile", "aclIsDefault");

    static Reload between(Settings running, Settings next) {
        List<String> changes = new ArrayList<>();
        List<String> restart = new ArrayList<>();
        LimitSettings a = running.limits();
        LimitSettings b = next.limits();
        note(changes, "limits.default", a.defaultLimit(), b.defaultLimit());
        note(changes, "limits.burst", a.burst(), b.burst());
        note(changes, "limits.action", a.action(), b.action());
        note(changes, "limits.dry-run", a.dryRun(), b.dryRun());
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
        for (RecordComponent c : Settings.class.getRecordComponents()) {
            if (!NOT_COMPARED.contains(c.getName())) {
                restartIf(restart, key(c.getName()), value(c, running), value(c, next));
            }
        }
        LimitSettings merged = new LimitSettings(b.defaultLimit(), a.algorithm(), b.burst(), b.action(), b.dryRun(),
                a.maxDomains(), a.janitorInterval(), a.publicSuffixList(), b.domains(), b.exemptClients(), b.origins());
        return new Reload(running.withLimits(merged), changes, restart);
    }

    private static void note(List<String> changes, String key, Object was, Object now) {
        if (!Objects.equals(was, now)) {
            changes.add(key + ": " + was + " -> " + now);
        }
    }

    private static void restartIf(List<String> restart, String key, Object was, Object now) {
        if (!Objects.equals(was, now)) {
            restart.add(key);
        }
    }

    /** {@code upstreamSockets} as its key, {@code upstream-sockets}. */
    private static String key(String component) {
        return component.replaceAll("([a-z])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT);
    }

    private static Object value(RecordComponent c, Settings s) {
        try {
            return c.getAccessor().invoke(s);
        } catch (IllegalAccessException | InvocationTargetException e) {
            throw new IllegalStateException(e);
        }
    }
}
