package io.sluice.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.wire.QueryView;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One of what sees a loop's upstream answers (the cache, the flood watch), kept from breaking the
 * forwarder and the others. An exception out of it (a bug, met by an answer no test had) would
 * leave that answer unsent and its copy unreleased (a leak per answer), the others blind to it,
 * and the query would wait out its deadline, be asked of the next upstream, and end in SERVFAIL.
 * Here it is counted ({@code internal_errors}) and logged with its stack, the first and then at
 * most one a minute across the loops, and the forwarder goes on as if this one had not seen the
 * answer: it is relayed, and an unanswered query gets its SERVFAIL or another's answer.
 */
public final class GuardedReplies implements UpstreamReplies {
    private static final Logger log = LoggerFactory.getLogger(GuardedReplies.class);
    private static final long LOG_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);
    /** When the last failure was logged, for every loop's guard; {@code Long.MIN_VALUE}: never. */
    private static final AtomicLong lastLogged = new AtomicLong(Long.MIN_VALUE);

    private final UpstreamReplies replies;
    private final LongAdder failures;

    GuardedReplies(UpstreamReplies replies, LongAdder failures) {
        this.replies = replies;
        this.failures = failures;
    }

    /** {@code replies} guarded, or {@link UpstreamReplies#NONE} itself: nothing to guard. */
    public static UpstreamReplies of(UpstreamReplies replies, LongAdder failures) {
        return replies == NONE ? NONE : new GuardedReplies(replies, failures);
    }

    @Override
    public void answered(ByteBuf query, QueryView view, ByteBuf reply) {
        try {
            replies.answered(query, view, reply);
        } catch (RuntimeException e) {
            failed("an upstream's answer", e);
        }
    }

    @Override
    public ByteBuf unanswered(ByteBufAllocator alloc, ByteBuf query, QueryView view, boolean overUdp,
                              boolean refreshFailed) {
        try {
            return replies.unanswered(alloc, query, view, overUdp, refreshFailed);
        } catch (RuntimeException e) {
            failed("a query no upstream answered", e);
            return null;
        }
    }

    private void failed(String what, RuntimeException e) {
        failures.increment();
        long now = System.nanoTime();
        long last = lastLogged.get();
        if ((last == Long.MIN_VALUE || now - last >= LOG_EVERY_NANOS) && lastLogged.compareAndSet(last, now)) {
            log.error("internal error in {} on {} (counted in internal_errors; logged at most once a minute), the"
                    + " query goes on without it", replies.getClass().getSimpleName(), what, e);
        }
    }
}
