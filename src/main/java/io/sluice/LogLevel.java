package io.sluice;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import org.slf4j.LoggerFactory;

/** The level of sluice's root logger, set at start and by a reload from {@code log-level}. */
final class LogLevel {
    private LogLevel() {
    }

    /** Sets the root logger to {@code level} (a name checked by the setting); null leaves it as logback.xml made it. */
    static void apply(String level) {
        if (level != null && LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME) instanceof Logger root) {
            root.setLevel(Level.toLevel(level));
        }
    }
}
