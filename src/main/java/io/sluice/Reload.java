package io.sluice;

import io.sluice.config.Durations;
import io.sluice.config.LimitSettings.DomainLimit;
import io.sluice.config.Setting;
import io.sluice.config.Setting.Applied;
import io.sluice.config.SettingTable;
import io.sluice.config.Settings;
import io.sluice.transport.Addresses;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.xbill.DNS.Type;

/**
 * What a reload changes, worked out from the setting table alone: each key whose value changed is
 * handed to the part its declaration names ({@link Setting#applied}), with its old and new value,
 * or named as needing a restart and kept as it was. A section with a switch (flood detection,
 * dnstap) takes its other keys only while it is on before and after; its switch turned on or off
 * needs a restart, as the part is in the query path or not.
 *
 * @param applied     the running settings with the reload's live changes in
 * @param changes     per part, one line per live change it takes
 * @param needRestart the keys whose new values wait for a restart
 */
record Reload(Settings applied, Map<Applied, List<String>> changes, List<String> needRestart) {
    /** Sections whose keys apply only while their switch is on, by key prefix. */
    private static final Map<String, Setting<?>> SWITCHES = Map.of("limits.flood.", SettingTable.FLOOD_DETECT,
            "dnstap.", SettingTable.DNSTAP_SOCKET);
    /** The default budget's keys, written as one line. */
    private static final String DEFAULT_BUDGET = "limits.default";

    static Reload between(Settings running, Settings next) {
        Map<Applied, List<String>> changes = new EnumMap<>(Applied.class);
        for (Applied a : Applied.values()) {
            changes.put(a, new ArrayList<>());
        }
        List<String> restart = new ArrayList<>();
        Map<Setting<?>, Object> taken = new HashMap<>();
        for (Setting<?> s : SettingTable.ALL) {
            Object was = running.value(s);
            Object now = next.value(s);
            if (Objects.equals(was, now)) {
                continue;
            }
            Setting<?> on = switchOf(s);
            if (on != null && on != s && !(isOn(running.value(on)) && isOn(next.value(on)))) {
                continue; // its section is off, or turned on or off: nothing it says is used now
            }
            if (s.applied() == Applied.RESTART || s == on && isOn(was) != isOn(now)) {
                restart.add(s.key());
                continue;
            }
            taken.put(s, now);
            if (!s.key().startsWith(DEFAULT_BUDGET)) {
                changes.get(s.applied()).add(s.key() + ": " + text(s, was) + " -> " + text(s, now));
            }
        }
        List<String> limits = changes.get(Applied.LIMITS);
        DomainLimit budgetWas = running.limits().defaultLimit();
        DomainLimit budgetNow = next.limits().defaultLimit();
        if (!budgetWas.equals(budgetNow)) {
            limits.add(0, DEFAULT_BUDGET + ": " + budgetWas + " -> " + budgetNow);
        }
        Set<String> domains = new TreeSet<>(running.limits().domains().keySet());
        domains.addAll(next.limits().domains().keySet());
        for (String d : domains) {
            DomainLimit was = running.limits().domains().get(d);
            DomainLimit now = next.limits().domains().get(d);
            if (!Objects.equals(was, now)) {
                limits.add("limits.domains." + d + ": " + (was == null ? "added, " + now
                        : now == null ? "removed (was " + was + ")" : was + " -> " + now));
            }
        }
        Settings applied = running.with(taken, next.limits().domains(), next.limits().origins());
        return new Reload(applied, changes, restart);
    }

    /** The lines of the changes {@code part} takes, empty when it takes none. */
    List<String> changesTo(Applied part) {
        return changes.get(part);
    }

    /** The setting that turns {@code s}'s section on, or null when it has none. */
    private static Setting<?> switchOf(Setting<?> s) {
        for (Map.Entry<String, Setting<?>> e : SWITCHES.entrySet()) {
            if (s.key().startsWith(e.getKey())) {
                return e.getValue();
            }
        }
        return null;
    }

    /** A switch is on when true, or when set at all (a socket path). */
    private static boolean isOn(Object value) {
        return value instanceof Boolean b ? b : value != null;
    }

    /** A value as the configuration file writes it: addresses as HOST:PORT, durations as 2s, types by name. */
    private static String text(Setting<?> s, Object value) {
        if (s == SettingTable.HEALTH_CHECK_TYPE) {
            return Type.string((Integer) value);
        }
        return text(value);
    }

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
}
