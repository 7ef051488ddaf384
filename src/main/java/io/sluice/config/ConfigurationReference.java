package io.sluice.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes {@code docs/configuration.md}: every key of {@link SettingTable}, with its flag, default,
 * what a reload does with it and its help, grouped by the YAML section it sits in. The page is
 * generated so that it cannot drift from the table; {@code ReferenceDocsTest} fails when the
 * committed page differs from what this writes, and says how to write it again:
 *
 * <pre>java -cp target/sluice.jar io.sluice.config.ConfigurationReference docs/configuration.md</pre>
 */
public final class ConfigurationReference {
    private ConfigurationReference() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: ConfigurationReference FILE");
            System.exit(2);
        }
        Files.writeString(Path.of(args[0]), markdown());
    }

    /** The page, as {@code docs/configuration.md} holds it. */
    public static String markdown() {
        StringBuilder out = new StringBuilder();
        out.append("# Configuration reference\n\n")
                .append("<!-- Generated from SettingTable by io.sluice.config.ConfigurationReference: do not edit;"
                        + " ReferenceDocsTest says how to write it again. -->\n\n")
                .append("Every key of the YAML file (`--config FILE`), with the flag that sets it from the command line"
                        + " where there is one (a flag overrides the file). `conf/sluice.yml` is the commented sample,"
                        + " with every key at its default. A reload (`SIGHUP`, `sluice ctl reload`, `POST /api/v1/reload`)"
                        + " applies the keys marked *live*, each part taking all its changed keys at once: *live (limits)*"
                        + " one new snapshot of the limits for the next query; *live (upstreams)* a new generation of"
                        + " upstreams, queries in flight ending on the old; *live (clients)* the client rules for the"
                        + " next datagram and connection; *live (dnstap)* where and what dnstap writes (while it is on);"
                        + " *live (log)* the log level. A change to any other key is kept as it was and named in the"
                        + " reload's log line as needing a restart, as is turning flood detection or dnstap on or off."
                        + " A bad value names the key, and the file and line; a start or reload with one changes"
                        + " nothing.\n");
        for (Map.Entry<String, List<Setting<?>>> section : sections().entrySet()) {
            out.append("\n## ").append(section.getKey().isEmpty() ? "Top level" : "`" + section.getKey() + "`")
                    .append("\n\n| key | flag | default | reload | meaning |\n|---|---|---|---|---|\n");
            for (Setting<?> s : section.getValue()) {
                out.append("| `").append(s.key()).append("` | ").append(flag(s)).append(" | ")
                        .append(s.defaultText() == null ? "" : cell(s.defaultText())).append(" | ")
                        .append(reload(s.applied())).append(" | ")
                        .append(cell(s.help())).append(s.repeatable() && !s.help().contains("repeatable") ? " A list." : "")
                        .append(" |\n");
            }
            if (section.getKey().equals("limits")) {
                out.append("\n`limits.domains` maps a registrable domain to its own budget (`{ queries: N, window:"
                        + " DURATION }`) or to `unlimited`: a file-only key, applied live; see conf/sluice.yml.\n");
            }
        }
        return out.toString();
    }

    /** The settings by section: the key's first part when it has a dot (cache, limits, admin), else the top level. */
    private static Map<String, List<Setting<?>>> sections() {
        Map<String, List<Setting<?>>> sections = new LinkedHashMap<>();
        sections.put("", new ArrayList<>());
        for (Setting<?> s : SettingTable.ALL) {
            int dot = s.key().indexOf('.');
            sections.computeIfAbsent(dot < 0 ? "" : s.key().substring(0, dot), k -> new ArrayList<>()).add(s);
        }
        return sections;
    }

    /** What a reload does with a key, as the reload column says it. */
    static String reload(Setting.Applied applied) {
        return switch (applied) {
            case RESTART -> "restart";
            case LIMITS -> "live (limits)";
            case CLIENT_RULES -> "live (clients)";
            case FORWARDING -> "live (upstreams)";
            case DNSTAP -> "live (dnstap)";
            case LOG_LEVEL -> "live (log)";
            case ECS -> "live (ecs)";
        };
    }

    private static String flag(Setting<?> s) {
        if (s.flag() == null) {
            return "";
        }
        return "`" + s.flag() + (s.label() == null ? "" : " " + s.label()) + "`";
    }

    private static String cell(String text) {
        return text.replace("|", "\\|").replace("\n", " ");
    }
}
