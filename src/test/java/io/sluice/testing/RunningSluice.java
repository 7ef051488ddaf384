package io.sluice.testing;

import io.sluice.Sluice;
import io.sluice.config.ConfigException;
import io.sluice.config.ConfigFile;
import io.sluice.config.Settings;
import io.sluice.config.SettingsSource;
import io.sluice.limit.Clock;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/** Starts an in-process sluice on an ephemeral loopback port, for tests. */
public final class RunningSluice implements AutoCloseable {
    private final Sluice sluice;

    private RunningSluice(Sluice sluice) {
        this.sluice = sluice;
    }

    /** @param keyValues settings as alternating key and value, e.g. "timeout", "300ms" */
    public static RunningSluice start(List<TestUpstream> upstreams, String... keyValues) throws Exception {
        return start(upstreams, Clock.system(), b -> { }, keyValues);
    }

    /** Starts with extra settings applied after the defaults of this fixture. */
    public static RunningSluice start(List<TestUpstream> upstreams, Customizer more) throws Exception {
        return start(upstreams, Clock.system(), more);
    }

    /** Settings changes that are not key and value pairs. */
    public interface Customizer {
        void apply(Settings.Builder b) throws Exception;
    }

    public static RunningSluice start(List<TestUpstream> upstreams, Clock clock, Customizer more,
                                      String... keyValues) throws Exception {
        List<String> ups = new ArrayList<>();
        for (TestUpstream u : upstreams) {
            ups.add(u.hostPort());
        }
        return startFor(ups, clock, more, keyValues);
    }

    /** Starts in front of upstreams given as HOST:PORT, a real nsd say. */
    public static RunningSluice startFor(List<String> upstreams, Clock clock, Customizer more,
                                         String... keyValues) throws Exception {
        SettingsSource settings = () -> {
            try {
                return settings(upstreams, more, keyValues);
            } catch (ConfigException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
        Sluice sluice = Sluice.start(settings.read(), clock);
        sluice.reloadFrom(settings); // as Main does: the file, then the same settings over it
        return new RunningSluice(sluice);
    }

    /**
     * The configuration file the customizer names, if any, then this fixture's settings over it.
     * The answer cache is off unless the file or the test turns it on: most tests are about what
     * reaches the upstream, and ask for the same name again and again.
     */
    private static Settings settings(List<String> upstreams, Customizer more, String... keyValues) throws Exception {
        Settings.Builder probe = new Settings.Builder();
        more.apply(probe);
        Settings.Builder b = new Settings.Builder();
        b.set("cache.size", List.of("0"));
        if (probe.configFile() != null) {
            ConfigFile.apply(probe.configFile(), b);
        }
        b.set("listen", List.of("127.0.0.1:0"));
        if (!upstreams.isEmpty()) { // else the file's
            b.set("upstreams", upstreams);
        }
        b.set("threads", List.of("2"));
        for (int i = 0; i < keyValues.length; i += 2) {
            b.set(keyValues[i], List.of(keyValues[i + 1]));
        }
        more.apply(b);
        return b.build();
    }

    public InetSocketAddress address() {
        return sluice.addresses().get(0);
    }

    public Sluice sluice() {
        return sluice;
    }

    @Override
    public void close() {
        sluice.close();
    }
}
