package io.sluice;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import io.sluice.config.Reloadable;
import io.sluice.config.Setting;
import io.sluice.config.Settings;
import org.slf4j.LoggerFactory;

/** The level of sluice's root logger, set at start and by a reload from {@code log-level}. */
final class LogLevel {
    /** What a reload does with {@code log-level}. */
    static final Reloadable RELOAD = new Reloadable() {
        @Override
        public Setting.Applied part() {
            return Setting.Applied.LOG_LEVEL;
        }

        @Override
        public void apply(Settings next) {
            LogLevel.apply(next.logLevel());
        }
    };

    private LogLevel() {
    }

    /**
     * Sets the root logger to {@code level} (a name checked by the setting); null to what
     * logback.xml sets when no level is configured: {@code SLUICE_LOG_LEVEL}'s, else INFO (so that
     * a reload without the key undoes one that set it).
     */
    static void apply(String level) {
        if (LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME) instanceof Logger root) {
            String unset = System.getProperty("SLUICE_LOG_LEVEL", System.getenv("SLUICE_LOG_LEVEL"));
            root.setLevel(level != null ? Level.toLevel(level) : Level.toLevel(unset, Level.INFO));
        }
    }
}
