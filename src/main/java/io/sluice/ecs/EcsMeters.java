package io.sluice.ecs;

import io.sluice.metrics.Registry;
import java.util.concurrent.atomic.LongAdder;

/** What the Client Subnet stages count. */
final class EcsMeters {
    final LongAdder added;
    final LongAdder replaced;
    final LongAdder cut;
    final LongAdder malformed;

    EcsMeters(Registry r, ClientSubnets module) {
        String help = "Queries whose Client Subnet sluice changed, by what it did: added (the client's network, to a"
                + " query without one), replaced (the client's option, by its network), cut (the client's own, to the"
                + " prefixes); or malformed (answered FORMERR).";
        added = r.counter("ecs", help, "action", "added");
        replaced = r.counter("ecs", help, "action", "replaced");
        cut = r.counter("ecs", help, "action", "cut");
        malformed = r.counter("ecs", help, "action", "malformed");
        for (EcsSettings.Mode mode : EcsSettings.Mode.values()) {
            r.gauge("ecs_mode", "The Client Subnet mode in force (ecs.mode): 1 for it, 0 for the others.",
                    () -> module.policy().mode() == mode ? 1 : 0, "mode", mode.name().toLowerCase(java.util.Locale.ROOT));
        }
    }
}
