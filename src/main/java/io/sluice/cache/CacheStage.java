package io.sluice.cache;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.pipeline.Answer;
import io.sluice.pipeline.AnswerSide;
import io.sluice.pipeline.Outcome;
import io.sluice.pipeline.Query;
import io.sluice.pipeline.Stage;
import io.sluice.transport.Transport;
import io.sluice.wire.AnswerKey;
import io.sluice.wire.Answers;
import io.sluice.wire.ClientSubnet;
import io.sluice.wire.QueryEdns;
import io.sluice.wire.QueryView;
import io.sluice.wire.ReplyRecords;
import io.sluice.wire.Wire;

/**
 * One loop's side of the {@link AnswerCache}: as a stage, it answers a query from a fresh entry
 * and passes every other on, so that the limits after it count only what reaches an upstream; as
 * its own answer side ({@link #answers}), it keeps the upstreams' answers and puts a stale one in
 * the place of a SERVFAIL. Its scratch key and readers are the loop's own, so nothing is allocated to
 * look an answer up.
 */
public final class CacheStage implements Stage, AnswerSide {
    private final AnswerCache cache;
    private final AnswerKey probe = new AnswerKey();
    /** What a lookup found. */
    private final CachedAnswer found = new CachedAnswer();
    /** What an upstream's reply is kept as. */
    private final CachedAnswer kept = new CachedAnswer();
    private final QueryEdns edns = new QueryEdns();
    /** The most a UDP answer to the query {@link #probe} last read may carry; 0 over TCP. */
    private int udpLimit;
    private final ReplyRecords records = new ReplyRecords();
    private final boolean serveStale;
    private final boolean prefetch;
    /** The stages after this one: the limits and the forwarder, which a prefetch goes through. */
    private Continuation next;
    /** The loop's number: the ring of the cache it stores in. */
    private final int loop;

    CacheStage(AnswerCache cache, int loop) {
        this.cache = cache;
        this.loop = loop;
        this.serveStale = cache.staleWhenLimited();
        this.prefetch = cache.prefetch();
    }

    @Override
    public void attach(Continuation next) {
        this.next = next;
    }

    @Override
    public Outcome handle(Query q) {
        if (!probe(q.message(), q.view(), q.overUdp())) {
            if (q.view().hasQuestion()) {
                cache.bypassed.increment();
            }
            return Outcome.CONTINUE;
        }
        long now = q.now();
        CachedAnswer a = find(q.message(), q.view(), now);
        if (a != null && a.freshAt(now)) {
            cache.hits.increment();
            q.answer(write(Transport.ALLOCATOR, q.message(), q.view(), a, now, false), Answer.Source.CACHE);
            if (prefetch && a.prefetchDueAt(now)) {
                prefetch(q, a);
            }
            return Outcome.ANSWERED;
        }
        if (a != null && a.staleWithoutAskingAt(now)) { // the upstreams failed to refresh it just now
            cache.staleServed.increment();
            q.answer(write(Transport.ALLOCATOR, q.message(), q.view(), a, now, true), Answer.Source.CACHE);
            return Outcome.ANSWERED;
        }
        cache.misses.increment();
        return Outcome.CONTINUE;
    }

    /**
     * Sends the answered query on through the limits to the upstream, its answer for the cache
     * alone, asked as the client's was (over TCP, or UDP of its size), to replace {@code a}: it
     * spends its domain's budget (and its client's) as any query that reaches an upstream does,
     * and one over budget is not sent (counted as limited, answered to no one).
     */
    private void prefetch(Query q, CachedAnswer a) {
        cache.prefetchSent(loop, a);
        q.answerNobody();
        next.proceed(q);
    }

    /**
     * A query over its budget, turned away by the limits, gets a stale entry in the place of the
     * refusal (or of the nothing of a drop) when there is one ({@code cache.stale-when-limited}).
     * It looks the query up again: a parked query comes back after others have been looked up.
     */
    private void overBudget(Answer a) {
        if (!serveStale || !probe(a.query(), a.view(), a.datagram())) {
            return;
        }
        long now = cache.now();
        CachedAnswer stale = find(a.query(), a.view(), now);
        if (stale == null || !stale.staleAt(now)) {
            return;
        }
        cache.staleServed.increment();
        a.replace(write(Transport.ALLOCATOR, a.query(), a.view(), stale, now, true), Answer.Source.CACHE);
    }

    /** The way back is this stage's own: it keeps answers and has stale ones for queries left unanswered. */
    @Override
    public AnswerSide answers() {
        return this;
    }

    /**
     * An upstream's answer is kept (once: not again as the copy a joined query gets); in the place of a SERVFAIL (the upstream's, or sluice's when
     * none answered or none could be asked) goes what the cache still has for the query, and in the
     * place of an over-budget refusal a stale answer ({@code cache.stale-when-limited}).
     */
    @Override
    public void answer(Answer a) {
        switch (a.source()) {
            case UPSTREAM -> {
                keep(a.query(), a.view(), a.datagram(), a.message());
                if (Wire.rcode(a.message()) == Wire.RCODE_SERVFAIL) {
                    instead(a, true);
                }
            }
            case SHARED -> { // kept with the answer it is a copy of
                if (Wire.rcode(a.message()) == Wire.RCODE_SERVFAIL) {
                    instead(a, true);
                }
            }
            case UPSTREAMS_FAILED -> instead(a, true);
            case NOT_FORWARDED, GATE_CLOSED -> instead(a, false);
            case OVER_BUDGET -> overBudget(a);
            default -> { }
        }
    }

    private void instead(Answer a, boolean refreshFailed) {
        ByteBuf stored = unanswered(Transport.ALLOCATOR, a.query(), a.view(), a.datagram(), refreshFailed);
        if (stored != null) {
            a.replace(stored, Answer.Source.CACHE);
        }
    }

    private void keep(ByteBuf query, QueryView view, boolean overUdp, ByteBuf reply) {
        if (!probe(query, view, overUdp)) {
            return;
        }
        if (!records.read(reply)
                || records.questionNameEnd() - reply.readerIndex() != view.nameEnd() - view.base()) {
            return; // not readable, or its question written otherwise than the query's: no name to swap in
        }
        if (probe.subnet() && ClientSubnet.forEveryNetwork(query, view, reply)) {
            probe.anyNetwork();
        }
        CachedAnswer previous = Wire.rcode(reply) == Wire.RCODE_SERVFAIL && cache.find(loop, probe, found, cache.now()) ? found : null;
        if (cache.toKeep(probe, reply, records, previous, kept)) {
            cache.put(loop, probe, kept);
        }
    }

    /**
     * What the cache still has for a query no upstream answered: a fresh answer kept while it
     * waited, or a stale one; after a failed refresh, the stale one is then served without asking
     * for {@code stale-refresh-time} ({@link AnswerCache#refreshFailed}).
     */
    private ByteBuf unanswered(ByteBufAllocator alloc, ByteBuf query, QueryView view, boolean overUdp,
                              boolean refreshFailed) {
        if (!probe(query, view, overUdp)) {
            return null;
        }
        long now = cache.now();
        CachedAnswer a = find(query, view, now);
        if (a == null || a.rcode() == Wire.RCODE_SERVFAIL) {
            return null; // a SERVFAIL kept, the upstream's own maybe: relayed or made, not the cache's
        }
        if (a.freshAt(now)) { // kept while this query waited (it counted as a miss)
            return write(alloc, query, view, a, now, false);
        }
        if (!a.staleAt(now)) {
            return null;
        }
        cache.staleServed.increment();
        if (refreshFailed) {
            cache.refreshFailed(loop, a);
        }
        return write(alloc, query, view, a, now, true);
    }

    /**
     * The answer kept for {@link #probe} that may be served to the query {@code view} has read, or
     * null; for a query with Client Subnet, its network's, else an answer for every network (the
     * probe then holds that one's key).
     */
    private CachedAnswer find(ByteBuf query, QueryView view, long now) {
        if (cache.find(loop, probe, found, now) && found.servesCase(query, view)) {
            return found;
        }
        if (!probe.subnet()) {
            return null;
        }
        probe.anyNetwork();
        return cache.find(loop, probe, found, now) && found.servesCase(query, view) ? found : null;
    }

    /**
     * Fills {@link #probe} from the query {@code view} has read, when it is one a cached answer may
     * be given to ({@link AnswerKey#of}), and {@link #udpLimit} with the most its answer may carry.
     */
    private boolean probe(ByteBuf query, QueryView view, boolean overUdp) {
        if (!probe.of(query, view, edns, overUdp, cache.maxUdpSize)) {
            return false;
        }
        udpLimit = probe.udpSize();
        return true;
    }

    /**
     * {@code a} for the query {@link #probe} last read, as {@link CachedAnswer#write} makes it;
     * over UDP, when larger than the query may carry, its header and the question alone with TC
     * set instead, as the forwarder cuts such an answer: a {@code tls://} upstream's, kept whole
     * for a UDP client, or a stale answer grown by its Extended DNS Error.
     */
    private ByteBuf write(ByteBufAllocator alloc, ByteBuf query, QueryView view, CachedAnswer a, long now,
                          boolean stale) {
        if (udpLimit != 0 && a.length(stale) > udpLimit) {
            cache.truncated.increment();
            return Answers.underUpstreamHeader(alloc, query, view, a.message(), true);
        }
        return a.write(alloc, query, view, now, stale);
    }
}
