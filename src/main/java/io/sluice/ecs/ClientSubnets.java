package io.sluice.ecs;

import io.netty.channel.EventLoop;
import io.sluice.config.ConfigException;
import io.sluice.config.Reloadable;
import io.sluice.config.Setting;
import io.sluice.config.Settings;
import io.sluice.config.UpstreamAddress;
import io.sluice.metrics.Registry;
import io.sluice.pipeline.Module;
import io.sluice.pipeline.Stage;
import java.util.Set;

/**
 * EDNS Client Subnet (RFC 7871) as a module: each loop's {@link EcsStage}, and the mode and
 * prefixes in force, which a reload replaces whole (one volatile write; each query reads them once).
 */
public final class ClientSubnets implements Module, Reloadable {
    /** The mode and the prefixes sent, as one value. */
    record Policy(EcsSettings.Mode mode, int ipv4Prefix, int ipv6Prefix) {
        static Policy of(Settings s) {
            return new Policy(s.value(EcsSettings.MODE), s.value(EcsSettings.IPV4_PREFIX), s.value(EcsSettings.IPV6_PREFIX));
        }

        @Override
        public String toString() {
            return mode == EcsSettings.Mode.OFF || mode == EcsSettings.Mode.PASS
                    ? "ecs " + mode.name().toLowerCase(java.util.Locale.ROOT)
                    : "ecs " + mode.name().toLowerCase(java.util.Locale.ROOT) + " /" + ipv4Prefix + " /" + ipv6Prefix;
        }
    }

    private volatile Policy policy;
    private final EcsMeters meters;
    private final int maxUdpSize;

    /** @throws ConfigException when ecs.upstreams names an upstream that upstreams does not */
    public ClientSubnets(Settings settings, Registry meters) throws ConfigException {
        check(settings);
        this.policy = Policy.of(settings);
        this.maxUdpSize = settings.maxUdpSize();
        this.meters = new EcsMeters(meters, this);
    }

    /** Whether {@code settings}' ecs.upstreams are all among its upstreams. */
    public static void checkAtStart(Settings settings) throws ConfigException {
        for (UpstreamAddress a : settings.value(EcsSettings.UPSTREAMS)) {
            if (!settings.upstreams().contains(a)) {
                throw new ConfigException(EcsSettings.UPSTREAMS.key() + ": " + a + " is not one of upstreams "
                        + settings.upstreams());
            }
        }
    }

    Policy policy() {
        return policy;
    }

    /** max-udp-size, which a UDP answer to a client never exceeds. */
    int maxUdpSize() {
        return maxUdpSize;
    }

    @Override
    public Stage stage(EventLoop loop) {
        return new EcsStage(this, meters);
    }

    /** For the startup line. */
    public String describe() {
        return policy.toString();
    }

    @Override
    public Setting.Applied part() {
        return Setting.Applied.ECS;
    }

    /** A reload that changes the upstreams or ecs.upstreams is checked here too: the forwarder sends by them. */
    @Override
    public boolean takes(Set<Setting.Applied> changed) {
        return changed.contains(Setting.Applied.ECS) || changed.contains(Setting.Applied.FORWARDING);
    }

    @Override
    public void check(Settings next) throws ConfigException {
        checkAtStart(next);
    }

    @Override
    public void apply(Settings next) {
        policy = Policy.of(next);
    }
}
