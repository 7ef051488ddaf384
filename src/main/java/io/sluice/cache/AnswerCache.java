package io.sluice.cache;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.sluice.config.CacheSettings;
import io.sluice.domain.DomainBytes;
import io.sluice.metrics.Registry;
import io.sluice.pipeline.Module;
import io.sluice.pipeline.Stage;
import io.sluice.wire.AnswerKey;
import io.sluice.wire.ReplyRecords;
import io.sluice.wire.Wire;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * The answers every loop shares, bounded in entries and in bytes, in an {@link AnswerTable}: no
 * object per answer, no lock, and a name asked again kept over a flood of names asked once. An
 * entry leaves only when replaced or overwritten: one past the last moment it may be served (stale
 * included) is never served, and goes when its room is wanted.
 *
 * <p>What is kept, and for how long, is decided here ({@link #toKeep}); what is served, by each
 * loop's {@link CacheStage}.
 */
public final class AnswerCache implements Module {
    private final AnswerTable table;
    private final int loops;
    private final AtomicInteger stages = new AtomicInteger();
    private final CacheSettings settings;
    private final LongSupplier clock;
    /** max-udp-size: the most a UDP answer carries, and the largest size an answer is kept for. */
    final int maxUdpSize;
    final LongAdder hits;
    final LongAdder misses;
    final LongAdder staleServed;
    final LongAdder bypassed;
    final LongAdder truncated;
    final LongAdder prefetches;

    /**
     * @param loops the event loops, each of which asks for one {@link #stage}
     * @param clock nanoseconds, from any origin: injected, so that tests move time by hand
     * @param maxUdpSize the most a UDP answer carries ({@code max-udp-size})
     */
    public AnswerCache(CacheSettings settings, int loops, LongSupplier clock, int maxUdpSize, Registry metrics) {
        this.settings = settings;
        this.maxUdpSize = maxUdpSize;
        this.loops = loops;
        this.clock = clock;
        hits = metrics.counter("cache_hits", "Queries answered from the cache with a fresh answer.");
        misses = metrics.counter("cache_misses", "Queries the cache had no fresh answer for.");
        staleServed = metrics.counter("cache_stale_answers",
                "Stale answers served (RFC 8767): no upstream answered, one answered SERVFAIL, or the domain was over its budget.");
        bypassed = metrics.counter("cache_bypassed",
                "Queries never answered from the cache: signed, EDNS version 1 and up, or a zone transfer.");
        prefetches = metrics.counter("cache_prefetches",
                "Fresh answers asked for again by a hit in the last tenth of their lifetime (cache.prefetch).");
        truncated = metrics.counter("cache_truncated",
                "Cached answers too large for the client's UDP payload size, sent truncated (TC) instead.");
        LongAdder evictions = metrics.counter("cache_evictions",
                "Answers evicted to keep the cache within its bounds, or overwritten by the ring of bytes as it wraps.");
        LongAdder rejected = metrics.counter("cache_rejected",
                "Answers not kept: their bucket of the cache full and their name not stored lately (its next answer is kept), or too large.");
        this.table = new AnswerTable(settings.size(), settings.ringBytes(loops), loops, evictions,
                rejected, settings.networksPerQuestion());
        metrics.gauge("cache_entries", "Answers in the cache now, expired ones not yet replaced included.", table::entries);
        metrics.gauge("cache_bytes", "Bytes of the cache's rings of answers written so far (at most their size: max-bytes, 64 KiB a loop at least).", table::bytes);
    }

    /** Copies the entry kept for {@code probe} into {@code into}, for {@code loop}: false when there is none that may be served at {@code now}. */
    boolean find(int loop, AnswerKey probe, CachedAnswer into, long now) {
        return table.find(probe, into, loop, now);
    }

    /** Keeps the answer {@code answer} holds, built for {@code key}, from {@code loop}. */
    void put(int loop, AnswerKey key, CachedAnswer answer) {
        table.put(loop, key, answer);
    }

    /**
     * The upstreams could not refresh {@code stale}, just found: for {@code stale-refresh-time} it
     * is served stale without asking them (RFC 8767's failure recheck timer), so that an outage is
     * not asked about on every query. Kept only if its slot still names it, so that a fresh answer
     * another loop kept meanwhile stays.
     */
    void refreshFailed(int loop, CachedAnswer stale) {
        long wait = settings.staleRefreshTime().toNanos();
        if (wait > 0) {
            stale.recheckAt(now() + wait);
            table.replace(loop, stale);
        }
    }

    /**
     * A hit found {@code answer} due for a prefetch ({@link CachedAnswer#prefetchDueAt}), and its
     * query goes on to ask the upstream: marked, so that no other hit asks again. Like
     * {@link #refreshFailed}, kept only while its slot still names it.
     */
    void prefetchSent(int loop, CachedAnswer answer) {
        answer.prefetchSent();
        table.replace(loop, answer);
        prefetches.increment();
    }

    boolean prefetch() {
        return settings.prefetch();
    }

    long now() {
        return clock.getAsLong();
    }

    /** The loop's side of the cache, as its stage: {@link #stage()}. */
    @Override
    public Stage stage(EventLoop loop) {
        return stage();
    }

    /** A stage for one event loop, which then stores answers in its own ring: one per loop. */
    public CacheStage stage() {
        int loop = stages.getAndIncrement();
        if (loop >= loops) {
            throw new IllegalStateException("a cache for " + loops + " loops asked for stage " + (loop + 1));
        }
        return new CacheStage(this, loop);
    }

    /** Answers the cache keeps at most: {@code cache.size} rounded up to a multiple of four. */
    public int capacity() {
        return table.capacity();
    }

    /** Answers in the cache now, expired ones not yet replaced included (a count while they change). */
    public long size() {
        return table.entries();
    }

    /** Removes every answer, off the loops (the admin API's flush): the answers removed. */
    public long flushAll() {
        return table.remove(AnswerTable.KeyFilter.ALL);
    }

    /**
     * Removes the answers to {@code name}, off the loops (the admin API's flush): of every type or
     * of {@code type} only, and with {@code subtree} those of every name under it as well (as
     * Unbound's {@code flush_zone}). A loop may still serve an answer it was reading as this ran,
     * and keeps what an upstream answers after.
     *
     * @param name a name in presentation form, A-labels ({@code .} is the root: with
     *             {@code subtree}, every answer)
     * @param type a record type's number, or -1 for every type
     * @return the answers removed
     * @throws IllegalArgumentException when {@code name} is not a name
     */
    public long flush(String name, int type, boolean subtree) {
        byte[] text = DomainBytes.fromText(name); // lower case, as a key holds it
        byte[] wire = Arrays.copyOf(text, text.length + 1); // and the root label
        return table.remove(AnswerTable.KeyFilter.names(wire, type, subtree));
    }

    /**
     * An answer kept for a name, as the admin API shows it.
     *
     * @param udpSize the payload size it was asked upstream with over UDP, or 0: over TCP
     */
    public record Kept(int type, int dclass, List<String> flags, int udpSize, int rcode, int records, long ttlSeconds,
                       boolean stale) {
    }

    /**
     * The answers kept for exactly {@code name} that may still be served (stale ones included),
     * off the loops: a look at the cache, such as Unbound's {@code lookup}.
     *
     * @param name a name in presentation form, A-labels
     * @throws IllegalArgumentException when {@code name} is not a name
     */
    public List<Kept> show(String name) {
        byte[] text = DomainBytes.fromText(name);
        long now = now();
        CachedAnswer a = new CachedAnswer();
        List<Kept> out = new ArrayList<>();
        table.forEach(AnswerTable.KeyFilter.names(Arrays.copyOf(text, text.length + 1), -1, false), (entry, length) -> {
            a.load(entry, length);
            if (now - a.keepUntil() >= 0) {
                return; // never served again: it waits to be replaced
            }
            byte[] e = a.entry();
            int key = AnswerTable.HEADER;
            int keyLength = a.keyLength();
            long fresh = a.freshUntil() - now;
            out.add(new Kept(AnswerKey.type(e, key, keyLength), AnswerKey.dclass(e, key, keyLength),
                    AnswerKey.flags(e, key, keyLength), AnswerKey.udpSize(e, key, keyLength), a.rcode(), a.answerCount(),
                    fresh > 0 ? (fresh + 999_999_999) / 1_000_000_000 : 0, fresh <= 0));
        });
        return out;
    }

    /**
     * Builds into {@code into} the entry to keep for the reply to {@code key} that {@code records}
     * has just read (successfully): false when it is not one to keep: TC set, an extended RCODE, a
     * TTL of 0, an RCODE other than NOERROR, NXDOMAIN or SERVFAIL, or a negative answer without an
     * SOA (RFC 2308 section 5). A negative answer lives no longer than its SOA's negative TTL nor
     * than any of its records (a CNAME before the NXDOMAIN).
     *
     * @param previous the entry kept for the same question, or null: a SERVFAIL does not replace
     *                 an answer that may still be served stale
     */
    boolean toKeep(AnswerKey key, ByteBuf reply, ReplyRecords records, CachedAnswer previous, CachedAnswer into) {
        int flags = reply.getUnsignedShort(reply.readerIndex() + Wire.FLAGS_OFFSET);
        if ((flags & Wire.FLAG_TC) != 0 || records.extendedRcode() != 0) {
            return false;
        }
        long now = now();
        long ttlNanos;
        boolean staleAllowed = true;
        int rcode = flags & Wire.RCODE_MASK;
        if (rcode == Wire.RCODE_SERVFAIL) {
            if (previous != null && previous.rcode() != Wire.RCODE_SERVFAIL && now - previous.keepUntil() < 0) {
                return false;
            }
            ttlNanos = settings.servfailTtl().toNanos();
            staleAllowed = false;
        } else if (rcode == Wire.RCODE_NXDOMAIN || rcode == Wire.RCODE_NOERROR && records.answersOfType() == 0) {
            // NODATA, after a CNAME chain too
            if (records.negativeTtl() < 0) {
                return false;
            }
            ttlNanos = Math.min(Math.min(records.negativeTtl(), records.minTtl()) * 1_000_000_000L,
                    settings.maxNegativeTtl().toNanos());
        } else if (rcode == Wire.RCODE_NOERROR) {
            ttlNanos = Math.min(records.minTtl() * 1_000_000_000L, settings.maxTtl().toNanos());
        } else {
            return false;
        }
        if (ttlNanos <= 0) {
            return false;
        }
        long freshUntil = now + ttlNanos;
        long keepUntil = staleAllowed ? freshUntil + settings.staleTtl().toNanos() : freshUntil;
        // A negative answer's records say no more than its time kept (the SOA's TTL is
        // min(TTL, MINIMUM), RFC 2308 section 5), any other's no more than max-ttl.
        long maxTtlSeconds = rcode == Wire.RCODE_NOERROR && records.answersOfType() > 0
                ? settings.maxTtl().toSeconds() : Math.max(1, ttlNanos / 1_000_000_000L);
        return into.build(key, reply, records, now, freshUntil, keepUntil, maxTtlSeconds);
    }

    boolean staleWhenLimited() {
        return settings.staleWhenLimited();
    }
}
