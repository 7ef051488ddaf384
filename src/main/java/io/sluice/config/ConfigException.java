package io.sluice.config;

/** A setting that cannot be used; the message names the flag or key, and the file line if any. */
public final class ConfigException extends Exception {
    public ConfigException(String message) {
        super(message);
    }

    /** The same problem, prefixed with where the value came from. */
    ConfigException at(String where) {
        return new ConfigException(where + ": " + getMessage());
    }
}
