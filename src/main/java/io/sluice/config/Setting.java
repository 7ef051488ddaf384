package io.sluice.config;

import java.util.List;

/**
 * One setting, declared once in {@link SettingTable} or in a module's {@link SettingSection}: its YAML key, its flag (if it has one), how
 * its value is written and checked, its default, whether a reload applies it, and the line of
 * help that {@code --help} prints. The file reader, the flags, the validation errors, what a
 * reload does with each key and {@code docs/configuration.md} all come from these declarations;
 * {@code conf/sluice.yml} is checked against them by a test.
 *
 * @param key         the YAML key, dotted inside sections ({@code limits.default.window})
 * @param flag        the command-line flag, or null for a key only the file sets
 * @param label       the flag's value placeholder ({@code DURATION}); null for a switch
 * @param defaultText the default as the documentation writes it ({@code 2s}, {@code number of cores})
 * @param defaultValue the default value; null where it is worked out at start (from the host) or absent
 * @param parser      reads and checks the value(s) as written
 * @param repeatable  a flag that may be given more than once, or a YAML list
 * @param applied     which part of the running server a reload hands a new value to, or
 *                    {@link Applied#RESTART} when it is kept as it was until a restart
 * @param help        one line for {@code --help}
 */
public record Setting<T>(String key, String flag, String label, String defaultText, T defaultValue,
                         Parser<T> parser, boolean repeatable, Applied applied, String help) {

    /**
     * What a reload does with a new value: which part takes it while running (each part taking
     * all of its keys' values at once), or none.
     */
    public enum Applied {
        /** Kept as it was, named as needing a restart. */
        RESTART,
        /** The limits: one new snapshot of budgets, flood settings, action, dry run and exemptions. */
        LIMITS,
        /** allow-clients, acl-action and proxy-protocol-from, replaced together. */
        CLIENT_RULES,
        /** A new forwarding generation: the upstreams and every way they are asked. */
        FORWARDING,
        /** Where dnstap writes, as whom and which messages. */
        DNSTAP,
        /** The root logger's level. */
        LOG_LEVEL,
        /** EDNS Client Subnet's mode and prefixes. */
        ECS
    }

    /** A reload puts it in force while running. */
    public boolean live() {
        return applied != Applied.RESTART;
    }


    /** Reads a setting's values as written (one, or a list) into its type, or says what is wrong. */
    @FunctionalInterface
    public interface Parser<T> {
        T parse(List<String> values) throws ConfigException;
    }

    /** A switch: a flag without a value, set to true when given. */
    public boolean isSwitch() {
        return flag != null && label == null;
    }

    /** Reads {@code values}, as a flag or a file gave them. */
    public T parse(List<String> values) throws ConfigException {
        return parser.parse(values);
    }

    /** A setting written as one value. */
    @FunctionalInterface
    public interface One<T> {
        T parse(String value) throws ConfigException;
    }

    /** A setting that takes one value (see the record's parameters). */
    public static <T> Setting<T> one(String key, String flag, String label, String defaultText, T defaultValue,
                                     One<T> parser, Applied applied, String help) {
        return new Setting<>(key, flag, label, defaultText, defaultValue, values -> {
            if (values.size() != 1) {
                throw new ConfigException("takes one value, got " + values.size());
            }
            return parser.parse(values.get(0));
        }, false, applied, help);
    }

    /** A setting that takes a list: a repeatable flag, a YAML list (see the record's parameters). */
    public static <T> Setting<T> list(String key, String flag, String label, String defaultText, T defaultValue,
                                      Parser<T> parser, Applied applied, String help) {
        return new Setting<>(key, flag, label, defaultText, defaultValue, parser, true, applied, help);
    }
}
