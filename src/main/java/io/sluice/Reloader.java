package io.sluice;

import io.sluice.config.ConfigException;
import io.sluice.config.Reloadable;
import io.sluice.config.Setting.Applied;
import io.sluice.config.Settings;
import io.sluice.config.SettingsSource;
import io.sluice.metrics.Registry;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;

/**
 * Puts a reload in force: reads the settings again, works out what changed ({@link Reload}), and
 * hands each part that takes it ({@link Reloadable}, listed once by {@code Sluice}) the new settings. Holds the settings as started with what reloads
 * changed since. Reloads come from the admin API and from SIGHUP, on their own threads: one at a
 * time, under this object's lock.
 */
final class Reloader {
    private final List<Reloadable> parts;
    private final LongAdder reloads;
    private final LongAdder reloadFailures;
    private volatile Settings settings;
    /** Reads the settings again: the file, then the same flags. Set after start, read by the admin and signal threads. */
    private volatile SettingsSource source = () -> {
        throw new ConfigException("nothing to reload: sluice was started without --config");
    };

    /** @param parts what a reload hands settings to, in the order it changes them ({@link Reloadable}) */
    Reloader(Settings started, Registry meters, List<Reloadable> parts) {
        this.settings = started;
        this.parts = List.copyOf(parts);
        this.reloads = meters.counter("reloads", "Reloads of the configuration that were put in force.");
        this.reloadFailures = meters.counter("reload_failures", "Reloads refused: the file was invalid; nothing changed.");
    }

    /** As started, with what reloads changed since. */
    Settings settings() {
        return settings;
    }

    /** Where {@link #reload} reads from. */
    void readFrom(SettingsSource source) {
        this.source = source;
    }

    /**
     * Reads the configuration again and puts in force what can change while running, each part
     * what its keys say ({@link Reload}): every part that takes the reload is checked before any
     * changes. What needs a restart is kept as it is and named in the result. One reload at a time.
     *
     * @return one line per change
     * @throws ConfigException when the file is invalid (naming file, line and key), or a part cannot
     *                         take it; nothing changes then
     */
    synchronized List<String> reload() throws ConfigException {
        Reload r;
        List<Reloadable> taking = new ArrayList<>();
        try {
            r = Reload.between(settings, source.read());
            Set<Applied> changed = EnumSet.noneOf(Applied.class);
            for (Applied part : Applied.values()) {
                if (!r.changesTo(part).isEmpty()) {
                    changed.add(part);
                }
            }
            for (Reloadable p : parts) {
                if (p.takes(changed)) {
                    taking.add(p);
                }
            }
            for (Reloadable p : taking) {
                p.check(r.applied()); // before anything changes
            }
            for (Reloadable p : taking) {
                p.apply(r.applied());
            }
        } catch (ConfigException e) {
            reloadFailures.increment();
            throw e;
        } catch (InterruptedException e) {
            reloadFailures.increment();
            Thread.currentThread().interrupt();
            throw new ConfigException("interrupted while putting the reload in force");
        } catch (RuntimeException e) { // a bug: say so, as a refused reload, rather than leave the caller an exception
            reloadFailures.increment();
            throw new ConfigException("cannot put the reload in force: " + e);
        }
        settings = r.applied();
        reloads.increment();
        List<String> all = new ArrayList<>();
        for (Applied part : Applied.values()) {
            all.addAll(r.changesTo(part));
        }
        r.needRestart().forEach(k -> all.add(k + ": needs a restart, kept as it was"));
        taking.forEach(p -> all.addAll(p.report()));
        return all;
    }
}
