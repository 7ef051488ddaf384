package io.sluice.forward;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.pipeline.InternalErrors;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The ticks that expire one loop's attempts: one every {@link #tickMillis} (a tenth of an attempt's
 * wait, 5 to 50 ms; 10 at most with retransmission) while any query waits on a deadline, none on
 * an idle loop: the tick after the last query ends is the last. Each tick also publishes the loop's
 * round-trip times. No timer is armed per query. Confined to its loop.
 */
final class DeadlineTicks {
    private static final long MIN_TICK_MILLIS = 5;
    private static final long MAX_TICK_MILLIS = 50;
    static final long RETRANSMIT_TICK_MILLIS = 10;

    private final EventLoop loop;
    private final long tickMillis;
    private final Runnable expire;
    private final BooleanSupplier deadlinesQueued;
    private final InternalErrors errors;
    private final Runnable tickTask = this::tick;
    private ScheduledFuture<?> next;
    private boolean stopped;

    /**
     * @param expire          expires what is due, each tick
     * @param deadlinesQueued whether any query waits on a deadline: the ticks go on while so
     * @param errors          where a bug met by a tick is counted
     */
    DeadlineTicks(EventLoop loop, long tickMillis, Runnable expire, BooleanSupplier deadlinesQueued,
                  InternalErrors errors) {
        this.loop = loop;
        this.tickMillis = tickMillis;
        this.expire = expire;
        this.deadlinesQueued = deadlinesQueued;
        this.errors = errors;
    }

    /**
     * The tick for attempts that wait {@code attemptNanos}: a tenth of it, 5 to 50 ms; at most
     * {@link #RETRANSMIT_TICK_MILLIS} when attempts are sent again at their retransmit timeout,
     * whose floor is 50 ms.
     */
    static long tickMillis(long attemptNanos, boolean retransmit) {
        long tick = Math.max(MIN_TICK_MILLIS, Math.min(MAX_TICK_MILLIS, TimeUnit.NANOSECONDS.toMillis(attemptNanos) / 10));
        return retransmit ? Math.min(tick, RETRANSMIT_TICK_MILLIS) : tick;
    }

    /** How late a tick may notice a deadline: what "a next attempt fits in the query's budget" allows. */
    long latenessNanos() {
        return TimeUnit.MILLISECONDS.toNanos(tickMillis);
    }

    /** A deadline was queued: the ticks run, if they did not. */
    void deadlineQueued() {
        if (next == null && !stopped) {
            next = loop.schedule(tickTask, tickMillis, TimeUnit.MILLISECONDS);
        }
    }

    private void tick() {
        try {
            expire.run();
        } catch (RuntimeException e) {
            // a bug: the next tick still comes, or no query of this loop would ever time out again
            errors.caught("Forwarder", "a deadline tick", "the next tick goes on", e);
        }
        next = !deadlinesQueued.getAsBoolean() || stopped ? null
                : loop.schedule(tickTask, tickMillis, TimeUnit.MILLISECONDS);
    }

    /** No tick more. */
    void stop() {
        stopped = true;
        if (next != null) {
            next.cancel(false);
        }
    }
}
