package io.sluice.ecs;

import io.sluice.config.Setting;
import io.sluice.config.Setting.Applied;
import io.sluice.config.ConfigException;
import io.sluice.config.SettingSection;
import io.sluice.config.UpstreamAddress;
import io.sluice.config.Values;
import java.util.ArrayList;
import java.util.List;

/** EDNS Client Subnet's settings: what sluice tells upstreams of its clients' addresses. */
public final class EcsSettings implements SettingSection {
    /** What sluice does with Client Subnet (RFC 7871) on the queries it forwards. */
    public enum Mode {
        /** Nothing: a client's option goes upstream as sent, and none is added. */
        OFF,
        /** A query without one gets its client's network; one with one keeps it, cut to the prefixes. */
        ADD,
        /** A client's option goes upstream as sent (checked), none added. */
        PASS,
        /** A client's option is replaced by its address's network. */
        REPLACE
    }

    public static final Setting<Mode> MODE = Setting.one("ecs.mode", "--ecs-mode", "MODE", "off", Mode.OFF,
            v -> Values.named(v, Mode.values()), Applied.ECS,
            "off | add | pass | replace: EDNS Client Subnet (RFC 7871) toward the upstreams; off sends no client's"
                    + " address anywhere.");
    public static final Setting<Integer> IPV4_PREFIX = Setting.one("ecs.ipv4-prefix", null, null, "24", 24,
            v -> Values.integer(v, 0, 32), Applied.ECS, "Bits of an IPv4 client's address sent (add, replace).");
    public static final Setting<Integer> IPV6_PREFIX = Setting.one("ecs.ipv6-prefix", null, null, "56", 56,
            v -> Values.integer(v, 0, 128), Applied.ECS, "Bits of an IPv6 client's address sent (add, replace).");

    public static final Setting<List<UpstreamAddress>> UPSTREAMS = Setting.list("ecs.upstreams", null, null,
            "all of upstreams", List.of(), EcsSettings::addresses, Applied.FORWARDING,
            "The upstreams that are sent Client Subnet, each as written in upstreams; the others get queries without it."
                    + " Empty: all.");

    private static List<UpstreamAddress> addresses(List<String> values) throws ConfigException {
        List<UpstreamAddress> out = new ArrayList<>();
        for (String v : values) {
            out.add(UpstreamAddress.parse(v));
        }
        return List.copyOf(out);
    }

    @Override
    public List<Setting<?>> settings() {
        return List.of(MODE, IPV4_PREFIX, IPV6_PREFIX, UPSTREAMS);
    }
}
