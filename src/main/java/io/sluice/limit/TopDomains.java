package io.sluice.limit;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The hottest domains of about the last ten seconds, after dnsdist's ring buffers: each event
 * loop writes the counter of every query it limits into a {@link Ring} of its own (two plain
 * stores and a release store: no lock, no allocation), and a thread of this class drains the
 * rings four times a second into per-second tallies, of which it keeps {@link #SECONDS}.
 *
 * <p>Memory is bounded whatever arrives: a ring holds {@link Ring#SIZE} entries, and a second's
 * tally keeps at most {@link #MAX_TALLY} domains, the busiest, once it is over
 * {@link #PRUNE_AT}. A loop that writes more than a ring holds between two drains (over 260,000
 * queries a second) overwrites entries not yet read; those are skipped, and the figures are then
 * low, in proportion.
 */
public final class TopDomains implements AutoCloseable {
    public static final int SECONDS = 10;
    static final int MAX_TALLY = 10_000;
    static final int PRUNE_AT = 50_000;
    private static final long DRAIN_MILLIS = 250;
    private static final byte ALLOWED = 0;
    private static final byte REFUSED = 1;
    /** The refusal of a query already written as allowed (one parked for Redis, refused later). */
    private static final byte REFUSED_LATER = 2;

    /** One domain's queries and refusals over the seconds kept. */
    public record Entry(String domain, long queries, long refused) {
    }

    /** One loop's recent decisions; written by that loop only. */
    public static final class Ring {
        static final int SIZE = 1 << 16;
        private static final VarHandle WRITTEN;

        static {
            try {
                WRITTEN = MethodHandles.lookup().findVarHandle(Ring.class, "written", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private final Counter[] counters = new Counter[SIZE];
        private final byte[] kinds = new byte[SIZE];
        /** The writer's own count: read without ordering, as only its loop writes. */
        private long next;
        /** {@link #next}, published with release semantics for the drain to read entries before it. */
        @SuppressWarnings("unused") // through WRITTEN
        private volatile long written;
        /** Entries drained so far: the drain's thread only. */
        private long read;

        public void allowed(Counter c) {
            put(c, ALLOWED);
        }

        public void refused(Counter c) {
            put(c, REFUSED);
        }

        public void refusedLater(Counter c) {
            put(c, REFUSED_LATER);
        }

        private void put(Counter c, byte kind) {
            long n = next;
            int i = (int) n & (SIZE - 1);
            counters[i] = c;
            kinds[i] = kind;
            next = n + 1;
            WRITTEN.setRelease(this, n + 1);
        }
    }

    private final List<Ring> rings = new CopyOnWriteArrayList<>();
    private final Deque<Map<Counter, long[]>> seconds = new ArrayDeque<>();
    private Map<Counter, long[]> current = new HashMap<>();
    private int drains;
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(
            new ThreadFactoryBuilder().setNameFormat("sluice-top").setDaemon(true).build());

    /** A new ring for one loop's limit stage. */
    public Ring ring() {
        Ring r = new Ring();
        rings.add(r);
        return r;
    }

    public void start() {
        thread.scheduleWithFixedDelay(this::drain, DRAIN_MILLIS, DRAIN_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** Reads what the rings gained since the last drain; every fourth drain closes a second. */
    synchronized void drain() {
        for (Ring r : rings) {
            long w = (long) Ring.WRITTEN.getAcquire(r);
            long from = Math.max(r.read, w - Ring.SIZE);
            for (long n = from; n < w; n++) {
                int i = (int) n & (Ring.SIZE - 1);
                Counter c = r.counters[i];
                if (c != null) {
                    long[] t = current.computeIfAbsent(c, k -> new long[2]);
                    byte kind = r.kinds[i];
                    t[0] += kind == REFUSED_LATER ? 0 : 1;
                    t[1] += kind == ALLOWED ? 0 : 1;
                }
            }
            r.read = w;
        }
        if (current.size() > PRUNE_AT) {
            current = busiest(current, MAX_TALLY);
        }
        if (++drains % (1000 / DRAIN_MILLIS) == 0) {
            seconds.addLast(current.size() > MAX_TALLY ? busiest(current, MAX_TALLY) : current);
            current = new HashMap<>();
            while (seconds.size() > SECONDS) {
                seconds.removeFirst();
            }
        }
    }

    private static Map<Counter, long[]> busiest(Map<Counter, long[]> tally, int keep) {
        List<Map.Entry<Counter, long[]>> list = new ArrayList<>(tally.entrySet());
        list.sort(Comparator.comparingLong((Map.Entry<Counter, long[]> e) -> e.getValue()[0]).reversed());
        Map<Counter, long[]> out = new HashMap<>();
        for (int i = 0; i < Math.min(keep, list.size()); i++) {
            out.put(list.get(i).getKey(), list.get(i).getValue());
        }
        return out;
    }

    /** The {@code n} busiest domains, by queries or by refusals, over the kept seconds and the one filling. */
    public synchronized List<Entry> top(int n, boolean byRefused) {
        Map<String, long[]> sum = new HashMap<>();
        List<Map<Counter, long[]>> all = new ArrayList<>(seconds);
        all.add(current);
        for (Map<Counter, long[]> second : all) {
            second.forEach((c, t) -> {
                long[] s = sum.computeIfAbsent(c.cachedName(), k -> new long[2]);
                s[0] += t[0];
                s[1] += t[1];
            });
        }
        int k = byRefused ? 1 : 0;
        return sum.entrySet().stream()
                .filter(e -> !byRefused || e.getValue()[1] > 0)
                .sorted(Comparator.comparingLong((Map.Entry<String, long[]> e) -> e.getValue()[k]).reversed()
                        .thenComparing(Map.Entry::getKey))
                .limit(n)
                .map(e -> new Entry(e.getKey(), e.getValue()[0], e.getValue()[1]))
                .toList();
    }

    /** The seconds the figures cover now (up to {@link #SECONDS}, and the one filling). */
    public synchronized int seconds() {
        return seconds.size() + 1;
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
