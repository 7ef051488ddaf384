package io.sluice.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import com.github.benmanes.caffeine.cache.Ticker;
import io.netty.buffer.ByteBuf;
import io.sluice.config.CacheSettings;
import io.sluice.metrics.Registry;
import io.sluice.pipeline.Responder;
import io.sluice.wire.ReplyRecords;
import io.sluice.wire.Wire;
import java.util.Arrays;
import java.util.concurrent.atomic.LongAdder;

/**
 * The answers every loop shares, bounded in entries and in bytes, in a Caffeine cache: W-TinyLFU
 * keeps the names asked again over a flood of names asked once, and its reads take no lock. Its
 * maintenance runs on the loop that triggers it, under a lock only ever tried, never waited for,
 * except by a put that finds the write buffer full (back-pressure in a burst of new answers). Each
 * entry weighs its heap bytes, but never less than {@code max-bytes / size}, so that the weight
 * bound holds both: at most {@code size} entries and at most {@code max-bytes} bytes. An entry
 * leaves only when evicted: one past the last moment it may be served (stale included) is never
 * served and goes with the next evictions, as Caffeine's time-based expiry cost 2.5% of a miss's
 * CPU at 20,000 qps (docs/benchmarks.md, "Answer cache").
 *
 * <p>What is kept, and for how long, is decided here ({@link #toKeep}); what is served, by each
 * loop's {@link CacheStage}.
 */
public final class AnswerCache {
    private final Cache<CacheKey, CachedAnswer> entries;
    private final CacheSettings settings;
    private final Ticker clock;
    final LongAdder hits;
    final LongAdder misses;
    final LongAdder staleServed;
    final LongAdder bypassed;
    final LongAdder truncated;
    final LongAdder[] answers;
    private final LongAdder evictions;

    /** @param clock nanoseconds, from any origin: injected, so that tests move time by hand */
    public AnswerCache(CacheSettings settings, Ticker clock, Registry metrics) {
        this.settings = settings;
        this.clock = clock;
        hits = metrics.counter("cache_hits", "Queries answered from the cache with a fresh answer.");
        misses = metrics.counter("cache_misses", "Queries the cache had no fresh answer for.");
        staleServed = metrics.counter("cache_stale_answers",
                "Stale answers served (RFC 8767): no upstream answered, one answered SERVFAIL, or the domain was over its budget.");
        bypassed = metrics.counter("cache_bypassed",
                "Queries never answered from the cache: Client Subnet, signed, EDNS version 1 and up, or a zone transfer.");
        truncated = metrics.counter("cache_truncated",
                "Cached answers too large for the client's UDP payload size, sent truncated (TC) instead.");
        evictions = metrics.counter("cache_evictions", "Answers evicted to keep the cache within its bounds.");
        answers = Responder.answerCounters(metrics, "cache");
        long minWeight = Math.max(1, settings.maxBytes() / Math.max(1, settings.size()));
        this.entries = Caffeine.newBuilder()
                .maximumWeight(settings.maxBytes())
                .weigher((CacheKey k, CachedAnswer a) -> (int) Math.min(Integer.MAX_VALUE,
                        Math.max(minWeight, k.heapBytes() + a.heapBytes())))
                .evictionListener((CacheKey k, CachedAnswer a, RemovalCause cause) -> {
                    if (cause == RemovalCause.SIZE) {
                        evictions.increment();
                    }
                })
                // Maintenance (applying writes, evicting) on the thread whose read or write calls
                // for it, amortized: on the common pool it cost a futex wake-up every few queries,
                // 50,904 against 1,109 in 10 s at 20,000 qps (docs/benchmarks.md, "Answer cache").
                .executor(Runnable::run)
                .build();
        metrics.gauge("cache_entries", "Answers in the cache now.", entries::estimatedSize);
        metrics.gauge("cache_bytes", "Heap the cache's entries weigh now (each at least max-bytes / size).",
                () -> entries.policy().eviction().orElseThrow().weightedSize().orElse(0));
    }

    CachedAnswer get(CacheKey probe) {
        return entries.getIfPresent(probe);
    }

    void put(CacheKey key, CachedAnswer answer) {
        entries.put(key, answer);
    }

    /**
     * The upstreams could not refresh {@code stale}, kept under {@code probe}: for
     * {@code stale-refresh-time} it is served stale without asking them (RFC 8767's failure
     * recheck timer), so that an outage is not asked about on every query. Replaced only if still
     * the entry, so that a fresh answer another loop kept meanwhile stays.
     */
    void refreshFailed(CacheKey probe, CachedAnswer stale) {
        long wait = settings.staleRefreshTime().toNanos();
        if (wait > 0) {
            entries.asMap().replace(probe.copy(), stale, stale.recheckingAt(now() + wait));
        }
    }

    long now() {
        return clock.read();
    }

    /** A stage for one event loop. */
    public CacheStage stage() {
        return new CacheStage(this);
    }

    /** Answers in the cache now (an estimate while they change). */
    public long size() {
        return entries.estimatedSize();
    }

    /** Runs what the cache defers (evictions) now: for tests. */
    public void cleanUp() {
        entries.cleanUp();
    }

    /**
     * The entry to keep for the reply {@code records} has just read (successfully), or null when
     * it is not one to keep: TC set, an extended RCODE, a TTL of 0, an RCODE other than NOERROR,
     * NXDOMAIN or SERVFAIL, or a negative answer without an SOA (RFC 2308 section 5). A negative
     * answer lives no longer than its SOA's negative TTL nor than any of its records (a CNAME
     * before the NXDOMAIN).
     *
     * @param previous the entry kept for the same question, or null: a SERVFAIL does not replace
     *                 an answer that may still be served stale
     */
    CachedAnswer toKeep(ByteBuf reply, ReplyRecords records, CachedAnswer previous) {
        int flags = reply.getUnsignedShort(reply.readerIndex() + Wire.FLAGS_OFFSET);
        if ((flags & Wire.FLAG_TC) != 0 || records.extendedRcode() != 0) {
            return null;
        }
        long now = now();
        long ttlNanos;
        boolean staleAllowed = true;
        int rcode = flags & Wire.RCODE_MASK;
        if (rcode == Wire.RCODE_SERVFAIL) {
            if (previous != null && previous.rcode() != Wire.RCODE_SERVFAIL && now - previous.keepUntil() < 0) {
                return null;
            }
            ttlNanos = settings.servfailTtl().toNanos();
            staleAllowed = false;
        } else if (rcode == Wire.RCODE_NXDOMAIN || rcode == Wire.RCODE_NOERROR && records.answersOfType() == 0) {
            // NODATA, after a CNAME chain too
            if (records.negativeTtl() < 0) {
                return null;
            }
            ttlNanos = Math.min(Math.min(records.negativeTtl(), records.minTtl()) * 1_000_000_000L,
                    settings.maxNegativeTtl().toNanos());
        } else if (rcode == Wire.RCODE_NOERROR) {
            ttlNanos = Math.min(records.minTtl() * 1_000_000_000L, settings.maxTtl().toNanos());
        } else {
            return null;
        }
        if (ttlNanos <= 0) {
            return null;
        }
        long freshUntil = now + ttlNanos;
        long keepUntil = staleAllowed ? freshUntil + settings.staleTtl().toNanos() : freshUntil;
        int[] offsets = Arrays.copyOf(records.ttlOffsets(), records.ttlCount());
        int optAt = records.optAt() < 0 ? -1 : records.optAt() - reply.readerIndex();
        return new CachedAnswer(records.copyToKeep(reply), offsets, optAt, now, freshUntil, keepUntil, now);
    }

    boolean staleWhenLimited() {
        return settings.staleWhenLimited();
    }
}
