package io.sluice.backend.redis;

import io.lettuce.core.resource.EventLoopGroupProvider;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutorGroup;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Lettuce's connections on sluice's own event loops instead of threads of Lettuce's: a call made on
 * the loop its connection is on is written without a hand-off, its reply is read there, and two
 * threads fewer compete for the cores with the loops, Redis and the upstream. The group belongs to
 * sluice, which shuts it down: Lettuce's release and shutdown leave it running.
 */
final class SharedLoops implements EventLoopGroupProvider {
    private final EventLoopGroup group;
    private final int loops;

    SharedLoops(EventLoopGroup group, int loops) {
        this.group = group;
        this.loops = loops;
    }

    /** Lettuce asks for its transport's group class; sluice's group is of the same transport (see RedisLink). */
    @Override
    @SuppressWarnings("unchecked")
    public <T extends EventLoopGroup> T allocate(Class<T> type) {
        return (T) group;
    }

    @Override
    public int threadPoolSize() {
        return loops;
    }

    @Override
    public Future<Boolean> release(EventExecutorGroup eventLoopGroup, long quietPeriod, long timeout, TimeUnit unit) {
        return ImmediateEventExecutor.INSTANCE.newSucceededFuture(true);
    }

    @Override
    public Future<Boolean> shutdown(long quietPeriod, long timeout, TimeUnit unit) {
        return ImmediateEventExecutor.INSTANCE.newSucceededFuture(true);
    }
}
