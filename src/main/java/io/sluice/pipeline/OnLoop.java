package io.sluice.pipeline;

import io.netty.channel.EventLoop;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.IntSupplier;

/** Reads a loop-confined count from outside the loops, on the loop that owns it. */
public final class OnLoop {
    private OnLoop() {
    }

    /**
     * {@code count} as read on {@code loop}, waiting for it; 0 when the loop has stopped or the
     * waiting thread is interrupted (its flag set again), as a drain that gives up counts nothing.
     */
    public static int count(EventLoop loop, IntSupplier count) {
        try {
            return loop.submit(count::getAsInt).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        } catch (ExecutionException | RejectedExecutionException e) {
            return 0;
        }
    }
}
