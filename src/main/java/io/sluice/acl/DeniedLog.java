package io.sluice.acl;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which clients the access control turned away, for the log. Each event loop leaves the latest
 * source it denied in its own slot (one reference written: no lock, no allocation); once a second
 * a thread of its own reads the slots and logs a source it has not logged in the last minute, with
 * the count of denied queries since the last line. So a source is logged at most once a minute,
 * and a flood from many sources costs at most a line a second per loop.
 */
public final class DeniedLog implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DeniedLog.class);
    private static final long QUIET_NANOS = TimeUnit.MINUTES.toNanos(1);
    /** Sources remembered as logged; past this the oldest are forgotten (and may be logged again). */
    private static final int MAX_REMEMBERED = 10_000;

    /** One loop's latest denied source. */
    public static final class Slot {
        private final AtomicReference<InetAddress> latest = new AtomicReference<>();

        void set(InetAddress source) {
            latest.lazySet(source);
        }
    }

    private final List<Slot> slots = new ArrayList<>();
    private final LongAdder denied;
    private final Map<InetAddress, Long> loggedAt = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<InetAddress, Long> eldest) {
            return size() > MAX_REMEMBERED;
        }
    };
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(
            new ThreadFactoryBuilder().setNameFormat("sluice-acl-log").setDaemon(true).build());
    private long deniedAtLastLine;

    /** @param denied the {@code acl_denied} counter, for the counts in the lines */
    public DeniedLog(LongAdder denied) {
        this.denied = denied;
    }

    /** A slot for one loop's stage; call before {@link #start}. */
    synchronized Slot slot() {
        Slot s = new Slot();
        slots.add(s);
        return s;
    }

    public void start() {
        thread.scheduleWithFixedDelay(this::drain, 1, 1, TimeUnit.SECONDS);
    }

    synchronized void drain() {
        long now = System.nanoTime();
        for (Slot s : slots) {
            InetAddress source = s.latest.getAndSet(null);
            if (source == null) {
                continue;
            }
            Long last = loggedAt.get(source);
            if (last != null && now - last < QUIET_NANOS) {
                continue;
            }
            loggedAt.put(source, now);
            long total = denied.sum();
            log.warn("refusing queries from {}: not in allow-clients ({} denied since the last such line)",
                    source.getHostAddress(), total - deniedAtLastLine);
            deniedAtLastLine = total;
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
