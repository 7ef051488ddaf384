package io.sluice.config;

import java.util.List;
import java.util.Set;

/**
 * A part of the running server that a reload hands new settings to: the part its keys name
 * ({@link Setting#applied}). The server lists its parts once; a reload checks every part that
 * takes it before it changes any, then puts the settings in force part by part, in that order.
 *
 * <p>So that a failed reload changes nothing: what can fail is found in {@link #check}, and only
 * the first part listed (a new forwarding generation, which changes nothing when it cannot be
 * made) may still fail in {@link #apply}.
 */
public interface Reloadable {
    /** Which of a reload's changes it takes. */
    Setting.Applied part();

    /** Whether a reload that changes {@code changed} concerns it: when its part's keys changed. */
    default boolean takes(Set<Setting.Applied> changed) {
        return changed.contains(part());
    }

    /** Throws what {@code next} cannot be put in force for; changes nothing. */
    default void check(Settings next) throws ConfigException {
    }

    /** Puts {@code next} in force. */
    void apply(Settings next) throws ConfigException, InterruptedException;

    /** What it did beyond the keys that changed, one line each, for the reload's report; after {@link #apply}. */
    default List<String> report() {
        return List.of();
    }
}
