package io.sluice.backend.redis;

import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Redis server that {@link RedisLink} calls: the standalone Redis, or one master of a cluster.
 * A call to it that fails or is late puts it away at once: the domains it holds are decided by the
 * failure policy without calling it, until it answers again (a PING of the link's probe, or a call
 * that was still out). One log
 * line when it goes away and one when it is back, at most one of each per 10 s however it flaps.
 *
 * <p>{@link #away} is read by every event loop per batch of calls and written only on the rare
 * transitions, under this object's lock.
 */
final class RedisNode {
    private static final Logger log = LoggerFactory.getLogger(RedisNode.class);
    private static final long LINE_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** How the lines name it: "redis redis://h:p" or "redis cluster node h:p". */
    final String name;
    private final String policy;
    private final Runnable onChange;
    private volatile boolean away;
    private long lastAwayLine = System.nanoTime() - LINE_INTERVAL_NANOS;
    private long lastBackLine = System.nanoTime() - LINE_INTERVAL_NANOS;
    private int flaps;

    /**
     * @param policy   the failure policy's name, for the away line
     * @param onChange run after each transition, under this node's lock
     */
    RedisNode(String name, String policy, Runnable onChange) {
        this.name = name;
        this.policy = policy;
        this.onChange = onChange;
    }

    boolean away() {
        return away;
    }

    /** A call or a probe answered. */
    void answered() {
        if (away) { // every successful call passes here: no lock unless the state changes
            back();
        }
    }

    private synchronized void back() {
        if (!away) {
            return;
        }
        away = false;
        onChange.run();
        long now = System.nanoTime();
        if (now - lastBackLine >= LINE_INTERVAL_NANOS) {
            lastBackLine = now;
            log.info("{} is back: its counters are shared again{}", name, flaps > 0
                    ? " (it went away and came back " + flaps + " more times since the last line)" : "");
            flaps = 0;
        } else {
            flaps++;
        }
    }

    /** A call failed or was later than the timeout, or the connection is lost. */
    void failed(String why) {
        if (!away) {
            goAway(why);
        }
    }

    private synchronized void goAway(String why) {
        if (away) {
            return;
        }
        away = true;
        onChange.run();
        long now = System.nanoTime();
        if (now - lastAwayLine >= LINE_INTERVAL_NANOS) {
            lastAwayLine = now;
            log.warn("{} is away ({}): its domains are decided with --redis-failure {} until it answers again",
                    name, why, policy);
        }
    }
}
