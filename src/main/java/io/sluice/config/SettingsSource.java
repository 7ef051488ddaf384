package io.sluice.config;

/** Where a reload reads its settings: the file again, then the same flags over it. */
@FunctionalInterface
public interface SettingsSource {
    Settings read() throws ConfigException;
}
