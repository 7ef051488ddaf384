package io.sluice.forward;

import io.sluice.config.Settings;

/** The upstream a loop's new query asks first, as {@code upstream-policy} says. Confined to its loop. */
final class FirstUpstream {
    private final Settings.UpstreamPolicy policy;
    private final int upstreams;
    private final QueryIds random;
    /** round-robin: the upstream the next query asks first. */
    private int nextInTurn;

    FirstUpstream(Settings.UpstreamPolicy policy, int upstreams, QueryIds random) {
        this.policy = policy;
        this.upstreams = upstreams;
        this.random = random;
    }

    /** The index of the upstream the next query asks first; its order goes on from there. */
    int next() {
        return switch (policy) {
            case SEQUENTIAL -> 0;
            case RANDOM -> random.nextIndex(upstreams);
            case ROUND_ROBIN -> {
                int first = nextInTurn;
                nextInTurn = first + 1 == upstreams ? 0 : first + 1;
                yield first;
            }
        };
    }
}
