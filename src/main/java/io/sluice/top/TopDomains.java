package io.sluice.top;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import io.prometheus.metrics.model.snapshots.Labels;
import io.sluice.domain.DomainBytes;
import io.sluice.metrics.Registry;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The hottest domains of about the last ten seconds, after dnsdist's ring buffers: each event
 * loop writes the fingerprint and name of every query it limits into a {@link Ring} of its own
 * (plain stores, a copy of the name's few bytes and two release stores: no lock, no allocation),
 * and a thread of this class drains the rings four times a second into per-second tallies, of
 * which it keeps {@link #SECONDS}.
 *
 * <p>Memory is bounded whatever arrives: a ring holds {@link Ring#SIZE} entries and
 * {@link Ring#NAME_BYTES} bytes of names, and a second's tally keeps at most {@link #MAX_TALLY}
 * domains, the busiest, once it is over {@link #PRUNE_AT}. A loop that writes more than a ring
 * holds between two drains (over 260,000 queries a second, or names longer than 15 bytes on
 * average at fewer) overwrites entries not yet read; those are skipped, and the figures are then
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
    /**
     * A query already written as allowed that was not sent, its domain having as many waiting on
     * upstreams as it may ({@code limits.max-inflight-per-domain}).
     */
    private static final byte INFLIGHT_CAPPED = 3;

    /**
     * One domain's queries and refusals over the seconds kept, and of its queries those not sent
     * for its bound on queries waiting.
     */
    public record Entry(String domain, long queries, long refused, long inflightCapped) {
    }

    /** One domain's counts in one second. */
    private static final class Tally {
        final String name;
        long queries;
        long refused;
        long inflightCapped;

        Tally(String name) {
            this.name = name;
        }
    }

    /** One loop's recent decisions; written by that loop only. */
    public static final class Ring {
        static final int SIZE = 1 << 16;
        static final int NAME_BYTES = SIZE * 16;
        private static final VarHandle WRITTEN;
        private static final VarHandle NAMES_WRITTEN;

        static {
            try {
                WRITTEN = MethodHandles.lookup().findVarHandle(Ring.class, "written", long.class);
                NAMES_WRITTEN = MethodHandles.lookup().findVarHandle(Ring.class, "namesWritten", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private final long[] fingerprints = new long[SIZE];
        /** Where each entry's name starts in {@link #names}, counted from the ring's first byte ever. */
        private final long[] nameAt = new long[SIZE];
        private final byte[] kinds = new byte[SIZE];
        /** Each name as a length octet and its wire bytes, one after the other, round. */
        private final byte[] names = new byte[NAME_BYTES];
        /** The writer's own counts: read without ordering, as only its loop writes. */
        private long next;
        private long namesNext;
        /** {@link #next} and {@link #namesNext}, published with release semantics for the drain to read entries before them. */
        @SuppressWarnings("unused") // through WRITTEN
        private volatile long written;
        @SuppressWarnings("unused") // through NAMES_WRITTEN
        private volatile long namesWritten;
        /** Entries drained so far: the drain's thread only. */
        private long read;

        public void allowed(long fingerprint, byte[] name, int length) {
            put(fingerprint, name, length, ALLOWED);
        }

        public void refused(long fingerprint, byte[] name, int length) {
            put(fingerprint, name, length, REFUSED);
        }

        public void refusedLater(long fingerprint, byte[] name, int length) {
            put(fingerprint, name, length, REFUSED_LATER);
        }

        /** A query written as allowed was not sent: its domain had as many waiting as it may. */
        public void inflightCapped(long fingerprint, byte[] name, int length) {
            put(fingerprint, name, length, INFLIGHT_CAPPED);
        }

        private void put(long fingerprint, byte[] name, int length, byte kind) {
            VarHandle.releaseFence(); // what the drain validated stays before what is overwritten now
            long pos = namesNext;
            int at = (int) (pos % NAME_BYTES);
            if (at + 1 + length > NAME_BYTES) { // names do not wrap: start again at the ring's first byte
                pos += NAME_BYTES - at;
                at = 0;
            }
            names[at] = (byte) length;
            System.arraycopy(name, 0, names, at + 1, length);
            namesNext = pos + 1 + length;
            long n = next;
            int i = (int) n & (SIZE - 1);
            fingerprints[i] = fingerprint;
            nameAt[i] = pos;
            kinds[i] = kind;
            next = n + 1;
            NAMES_WRITTEN.setRelease(this, namesNext);
            WRITTEN.setRelease(this, n + 1);
        }

        /** The name of entry {@code n} at {@code pos}, or null when the writer has written over it meanwhile. */
        private String name(long n, long pos, byte[] scratch) {
            int at = (int) (pos % NAME_BYTES);
            int length = names[at] & 0xFF;
            if (at + 1 + length > NAME_BYTES) {
                return null; // torn
            }
            System.arraycopy(names, at + 1, scratch, 0, length);
            VarHandle.acquireFence(); // the copy above is read before the counts below, as StampedLock.validate
            long namesNow = (long) NAMES_WRITTEN.getAcquire(this);
            long now = (long) WRITTEN.getAcquire(this);
            // The writer may be up to a skip and a name (2 x 256 bytes) past what it published.
            if (namesNow - pos > NAME_BYTES - 512 || now - n >= SIZE) {
                return null;
            }
            return DomainBytes.toText(scratch, length);
        }
    }

    private final List<Ring> rings = new CopyOnWriteArrayList<>();
    private final Deque<Map<Long, Tally>> seconds = new ArrayDeque<>();
    private Map<Long, Tally> current = new HashMap<>();
    private final byte[] scratch = new byte[256];
    private int drains;
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(
            new ThreadFactoryBuilder().setNameFormat("sluice-top").setDaemon(true).build());

    /** A new ring for one loop's limit stage. */
    public Ring ring() {
        Ring r = new Ring();
        rings.add(r);
        return r;
    }

    /**
     * The top-K gauges of /metrics, each with at most {@code k} domain labels, so that the series
     * stay few.
     */
    public void declareGauges(Registry meters, int k) {
        meters.gauges("top_domain_queries", "Queries of the " + k + " busiest domains (label domain) over about the last "
                + SECONDS + " seconds.", () -> gauge(k, false));
        meters.gauges("top_domain_refused", "Refusals of the " + k + " most refused domains (label domain) over about the"
                + " last " + SECONDS + " seconds.", () -> gauge(k, true));
    }

    private Map<Labels, Long> gauge(int k, boolean byRefused) {
        Map<Labels, Long> out = new LinkedHashMap<>();
        for (Entry e : top(k, byRefused)) {
            out.put(Labels.of("domain", e.domain()), byRefused ? e.refused() : e.queries());
        }
        return out;
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
                long fp = r.fingerprints[i];
                long pos = r.nameAt[i];
                byte kind = r.kinds[i];
                VarHandle.acquireFence(); // the entry is read before it is validated
                if ((long) Ring.WRITTEN.getAcquire(r) - n >= Ring.SIZE) {
                    continue; // written over while read
                }
                Tally t = current.get(fp);
                if (t == null) {
                    String name = r.name(n, pos, scratch);
                    if (name == null) {
                        continue;
                    }
                    t = new Tally(name);
                    current.put(fp, t);
                }
                t.queries += kind == REFUSED_LATER || kind == INFLIGHT_CAPPED ? 0 : 1;
                t.refused += kind == REFUSED || kind == REFUSED_LATER ? 1 : 0;
                t.inflightCapped += kind == INFLIGHT_CAPPED ? 1 : 0;
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

    private static Map<Long, Tally> busiest(Map<Long, Tally> tally, int keep) {
        List<Map.Entry<Long, Tally>> list = new ArrayList<>(tally.entrySet());
        list.sort(Comparator.comparingLong((Map.Entry<Long, Tally> e) -> e.getValue().queries).reversed());
        Map<Long, Tally> out = new HashMap<>();
        for (int i = 0; i < Math.min(keep, list.size()); i++) {
            out.put(list.get(i).getKey(), list.get(i).getValue());
        }
        return out;
    }

    /** The {@code n} busiest domains, by queries or by refusals, over the kept seconds and the one filling. */
    public synchronized List<Entry> top(int n, boolean byRefused) {
        Map<String, long[]> sum = new HashMap<>();
        List<Map<Long, Tally>> all = new ArrayList<>(seconds);
        all.add(current);
        for (Map<Long, Tally> second : all) {
            for (Tally t : second.values()) {
                long[] s = sum.computeIfAbsent(t.name, k -> new long[3]);
                s[0] += t.queries;
                s[1] += t.refused;
                s[2] += t.inflightCapped;
            }
        }
        int k = byRefused ? 1 : 0;
        return sum.entrySet().stream()
                .filter(e -> !byRefused || e.getValue()[1] > 0)
                .sorted(Comparator.comparingLong((Map.Entry<String, long[]> e) -> e.getValue()[k]).reversed()
                        .thenComparing(Map.Entry::getKey))
                .limit(n)
                .map(e -> new Entry(e.getKey(), e.getValue()[0], e.getValue()[1], e.getValue()[2]))
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
