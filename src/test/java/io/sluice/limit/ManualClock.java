package io.sluice.limit;

import java.util.concurrent.atomic.AtomicLong;

/** A clock tests move by hand. Starts on a window edge, well past the epoch. */
public final class ManualClock implements Clock {
    public static final long START = 1_800_000_000_000_000_000L;
    private final AtomicLong now = new AtomicLong(START);

    @Override
    public long epochNanos() {
        return now.get();
    }

    public void advanceMillis(long ms) {
        now.addAndGet(ms * 1_000_000L);
    }
}
