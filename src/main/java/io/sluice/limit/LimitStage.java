package io.sluice.limit;

import io.netty.buffer.ByteBuf;
import io.sluice.config.LimitSettings;
import io.sluice.domain.DomainKey;
import io.sluice.domain.DomainProbe;
import io.sluice.pipeline.Answer;
import io.sluice.pipeline.AnswerSide;
import io.sluice.pipeline.Outcome;
import io.sluice.pipeline.ParkedQuery;
import io.sluice.pipeline.Query;
import io.sluice.pipeline.Stage;
import io.sluice.top.TopDomains;
import io.sluice.transport.Transport;
import io.sluice.wire.Answers;
import io.sluice.wire.Wire;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.LongAdder;

/**
 * The limits stage: reduces the query's name to its registrable domain, counts it against that
 * domain's budget through the loop's {@link Decisions}, and answers a query over it with the
 * action (or, in a dry run, counts it and passes it on). Exempt clients and question-less queries
 * (a request for a server cookie names no domain) pass uncounted. While a domain's queries waiting
 * on upstreams are bounded ({@link WaitingPerDomain}), it puts the domain on each query it passes
 * on, but an exempt client's or an unlimited domain's, for the forwarder's gate; on the way back it
 * counts the queries the gate kept, and feeds flood detection. One per event loop.
 */
public final class LimitStage implements Stage, Decisions.Verdicts, AnswerSide {
    private final Limits limits;
    private final LongAdder[] limited;
    private final LongAdder limitedDryRun;
    private final LongAdder limitedPrefetches;
    private final Decisions decisions;
    private final DomainProbe domain = new DomainProbe();
    /** Whether the last {@link #refuse} refused the client (not a dry run, not a stale answer instead). */
    private boolean refused;
    /** The refusal on its way back now: the action counted, and whether a client's budget refused it. */
    private LimitSettings.Action refusing;
    private boolean refusingPerClient;
    private boolean refusingVerified;
    /** Unverified UDP queries refused since the last slipped one (limits' slip). */
    private int sinceSlip;
    /** Counts the refusal on its way back when it leaves as the limit's own (not replaced by a stale answer). */
    private final Answer.Leaving countRefusal = this::countRefusal;
    /** Whether this query has been counted as a dry run's refusal already (by its client's budget). */
    private boolean dryRunCounted;
    /** This loop's recent decisions, for the busiest domains; null when nobody asks. */
    private final TopDomains.Ring recent;
    /** Budgets per client network and domain, or null; the probe and label it is searched with. */
    private final DomainLimiter perClient;
    private final DomainProbe clientDomain = new DomainProbe();
    private final byte[] clientLabel = new byte[DomainProbe.MAX_LABEL];
    /** Where a refusal's Extended DNS Error text is written, reused per refusal. */
    private final byte[] refusalText = new byte[DomainLimiter.MAX_REFUSAL_TEXT];
    private final int ipv4Prefix;
    private final int ipv6Prefix;
    private final LongAdder limitedPerClient;
    private final LongAdder[] limitedByProof;
    /** The way back: each answer counted for flood detection ({@code flood.FloodWatch}); null when detection is off. */
    private final AnswerSide floodWatch;
    private final WaitingPerDomain waiting;
    private final LongAdder inflightCapped;
    private Continuation next;

    /**
     * @param top        where the busiest domains are worked out, or null for nowhere
     * @param floodWatch this loop's feed of flood detection, on the stage's answer side; null when off
     */
    public LimitStage(Limits limits, LimitMeters meters, Decisions.Maker maker, ScheduledExecutorService loop,
                      TopDomains top, AnswerSide floodWatch) {
        this.limits = limits;
        this.recent = top == null ? null : top.ring();
        this.perClient = limits.perClient();
        this.ipv4Prefix = limits.perClientSettings().ipv4Prefix();
        this.ipv6Prefix = limits.perClientSettings().ipv6Prefix();
        this.limitedPerClient = meters.limitedPerClient;
        this.limitedByProof = meters.limitedByProof;
        this.limited = meters.limited;
        this.limitedDryRun = meters.limitedDryRun;
        this.limitedPrefetches = meters.limitedPrefetches;
        this.decisions = maker.forLoop(loop, this);
        this.floodWatch = floodWatch;
        this.waiting = limits.waiting();
        this.inflightCapped = meters.inflightCapped;
    }

    @Override
    public AnswerSide answers() {
        return this;
    }

    /**
     * A query the forwarder's gate kept from being sent is counted (whatever an answer side puts
     * in its place later), by domain too; every answer feeds flood detection.
     */
    @Override
    public void answer(Answer a) {
        if (a.source() == Answer.Source.GATE_CLOSED) {
            inflightCapped.increment();
            if (recent != null && a.route().answersSomebody()) {
                limits.domains().reduce(a.query(), a.view().nameStart(), a.view().nameEnd(), domain);
                recent.inflightCapped(CounterTable.fingerprint(domain.hash64()), domain.bytes(), domain.length());
            }
        }
        if (floodWatch != null) {
            floodWatch.answer(a);
        }
    }

    @Override
    public void attach(Continuation next) {
        this.next = next;
    }

    @Override
    public Outcome handle(Query q) {
        DomainLimiter limiter = limits.limiter();
        boolean bounding = waiting.bounding();
        if (!limiter.counting() && perClient == null && !bounding) {
            return Outcome.CONTINUE; // nothing limited yet: only a reload or the admin API would change that
        }
        LimitRules rules = limiter.rules(); // one reading for the query: a reload replaces them whole
        if (!q.view().hasQuestion() || rules.exempt().length > 0 && rules.exempts(q.clientIp())) {
            return Outcome.CONTINUE;
        }
        // The clock before the name: its read waits for the work before it to finish (a fence),
        // which costs least here (docs/benchmarks.md, "Decision (JMH)").
        long now = q.now();
        limits.domains().reduce(q.message(), q.view().nameStart(), q.view().nameEnd(), domain);
        if (bounding && rules.budgets().override(CounterTable.fingerprint(domain.hash64())) != Policy.UNLIMITED) {
            q.domainHash(domain.hash64());
        }
        dryRunCounted = false;
        if (perClient != null) {
            // The client's budget first: a query it refuses spends none of the domain's.
            clientDomain.under(clientLabel, clientLabel(q.clientIp(), rules.verifiedShare() > 0 && q.verified()), domain);
            int cc = perClient.counterFor(clientDomain);
            if (cc != DomainLimiter.NONE && !perClient.tryAcquire(cc, clientDomain, now)) {
                if (rules.dryRun() && !q.answersNobody()) {
                    limitedPerClient.increment(); // a refusal counts it as it leaves
                }
                refusingPerClient = true;
                Outcome o = refuse(rules, perClient, cc, clientDomain.bytes(), clientDomain.length(), q);
                refusingPerClient = false;
                if (o != Outcome.CONTINUE) {
                    if (recent != null) { // under the domain: the busiest are domains, whichever budget refused
                        long fp = CounterTable.fingerprint(domain.hash64());
                        if (refused) {
                            recent.refused(fp, domain.bytes(), domain.length());
                        } else {
                            recent.allowed(fp, domain.bytes(), domain.length());
                        }
                    }
                    return o;
                } // a dry run: on to the domain's budget, as if the client's had allowed it
            }
        }
        int c = limiter.counterFor(domain);
        if (c == DomainLimiter.NONE) {
            return Outcome.CONTINUE;
        }
        if (c != limiter.overflowSlot()) {
            q.answerNote(limiter.answerNote(c)); // for the flood watch, with the upstream's answer
        }
        if (limiter.policy(c) == Policy.UNLIMITED) { // counted for the busiest domains only, or made unlimited while running
            if (recent != null) {
                record(limiter, c, false);
            }
            return Outcome.CONTINUE;
        }
        int d = decisions.decide(c, domain, q);
        Outcome o = switch (d) {
            case Decisions.ALLOWED -> Outcome.CONTINUE;
            case Decisions.REFUSED -> refuse(rules, limiter, c, domain.bytes(), domain.length(), q);
            default -> Outcome.PARKED; // allow() or refuse() below, once the store answers
        };
        if (recent != null) {
            // refused only when a client was (not a dry run, not a stale answer); a parked query's
            // later refusal adds only the refusal
            record(limiter, c, d == Decisions.REFUSED && refused);
        }
        return o;
    }

    /** Writes a decision on {@code slot} in the busiest domains' ring: the overflow counter under its own name. */
    private void record(DomainLimiter limiter, int slot, boolean refused) {
        long fp = limiter.fingerprint(slot);
        boolean overflow = slot == limiter.overflowSlot();
        byte[] name = overflow ? OVERFLOW_WIRE : domain.bytes();
        int length = overflow ? OVERFLOW_WIRE.length : domain.length();
        if (refused) {
            recent.refused(fp, name, length);
        } else {
            recent.allowed(fp, name, length);
        }
    }

    private static final byte[] OVERFLOW_WIRE = DomainKey.of(DomainLimiter.OVERFLOW_NAME).wire();

    /**
     * Writes the label of {@code client}'s network into {@link #clientLabel}: the address's bytes
     * within the prefix, host bits cleared, in hex, then {@code -} and the prefix length
     * ({@code c0000200-24} for 192.0.2.0/24), so that a counter's name reads in the refusal log;
     * then {@code v} for the verified queries' own budget ({@code limits.verified-share}), which
     * a forged flood from the same network cannot spend. An IPv4 address is read without
     * allocating; an IPv6 one costs a copy of its 16 octets.
     *
     * @return the label's length
     */
    private int clientLabel(InetAddress client, boolean verified) {
        int prefix;
        int n = 0;
        if (client instanceof Inet4Address) {
            prefix = ipv4Prefix;
            int a = client.hashCode() & (int) (0xFFFFFFFFL << (32 - prefix)); // the address, as Inet4Address keeps it
            for (int shift = 28; shift >= 0; shift -= 4) {
                clientLabel[n++] = HEX[(a >>> shift) & 0xF];
            }
        } else {
            prefix = ipv6Prefix;
            byte[] octets = client.getAddress();
            for (int i = 0; i < 16; i++) {
                int bits = Math.max(0, Math.min(8, prefix - 8 * i));
                int b = octets[i] & (0xFF00 >> bits) & 0xFF;
                clientLabel[n++] = HEX[b >>> 4];
                clientLabel[n++] = HEX[b & 0xF];
            }
        }
        clientLabel[n++] = '-';
        if (prefix >= 100) {
            clientLabel[n++] = (byte) ('0' + prefix / 100);
        }
        if (prefix >= 10) {
            clientLabel[n++] = (byte) ('0' + prefix / 10 % 10);
        }
        clientLabel[n++] = (byte) ('0' + prefix % 10);
        if (verified) {
            clientLabel[n++] = 'v';
        }
        return n;
    }

    private static final byte[] HEX = "0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    @Override
    public void allow(ParkedQuery parked) {
        next.proceed(next.reopen(parked));
    }

    @Override
    public void refuse(ParkedQuery parked, int slot, DomainKey over) {
        DomainLimiter limiter = limits.limiter();
        byte[] wire = slot == limiter.overflowSlot() ? OVERFLOW_WIRE : over.wire();
        Query q = next.reopen(parked);
        dryRunCounted = false;
        Outcome o = refuse(limiter.rules(), limiter, slot, wire, wire.length, q);
        if (recent != null && refused) {
            recent.refusedLater(limiter.fingerprint(slot), wire, wire.length);
        }
        if (o == Outcome.CONTINUE) {
            next.proceed(q);
        } else if (o == Outcome.DROPPED) {
            q.droppedAfterParking();
        }
    }

    /**
     * Acts on a query over the budget of the domain {@code wire[0, length)}, {@code slot} of
     * {@code limiter}: answered or dropped by the action of {@code rules}, an answer (or the
     * nothing of a drop) that goes back as {@link Answer.Source#OVER_BUDGET}, in whose place an
     * answer side may put another (the cache's stale one, {@code cache.stale-when-limited}); or
     * (dry run) counted and passed on.
     */
    private Outcome refuse(LimitRules rules, DomainLimiter limiter, int slot, byte[] wire, int length, Query q) {
        refused = false;
        if (rules.dryRun()) {
            if (!dryRunCounted) { // once a query, over the client's budget and the domain's alike
                limitedDryRun.increment();
                dryRunCounted = true;
            }
            return Outcome.CONTINUE;
        }
        if (q.answersNobody()) { // a cache's prefetch: no client is refused, and the cached answer stands
            limitedPrefetches.increment();
            return Outcome.DROPPED;
        }
        LimitSettings.Action action = rules.action();
        boolean verified = q.verified();
        if (rules.slip() > 0 && !verified && action != LimitSettings.Action.TRUNCATE && ++sinceSlip >= rules.slip()) {
            sinceSlip = 0;
            action = LimitSettings.Action.TRUNCATE; // slipped: a real client asks again over TCP, verified
        }
        int rcode = Wire.RCODE_REFUSED;
        int flags = Wire.FLAG_RA;
        switch (action) {
            case NXDOMAIN -> rcode = Wire.RCODE_NXDOMAIN;
            case TRUNCATE -> {
                // TC invites the client to retry over TCP, proving its address; over TCP there is
                // nothing left to invite, so it is refused.
                rcode = q.overUdp() ? Wire.RCODE_NOERROR : Wire.RCODE_REFUSED;
                flags |= q.overUdp() ? Wire.FLAG_TC : 0;
            }
            default -> { }
        }
        ByteBuf answer = action == LimitSettings.Action.DROP ? null : Answers.withQuestion(Transport.ALLOCATOR,
                q.message(), q.view(), flags, rcode, Answers.EDE_OTHER, refusalText,
                limiter.refusalText(slot, wire, length, refusalText));
        // truncate over UDP exists to make a spoofed source prove itself over TCP: nothing goes in its place
        boolean replaceable = !(action == LimitSettings.Action.TRUNCATE && q.overUdp());
        // counted by the action that answered: truncate over TCP answers as refused does
        refusing = action == LimitSettings.Action.TRUNCATE && !q.overUdp() ? LimitSettings.Action.REFUSED : action;
        refusingVerified = verified;
        q.answer(answer, replaceable ? Answer.Source.OVER_BUDGET : Answer.Source.SLUICE, countRefusal);
        if (!refused) {
            return Outcome.ANSWERED; // a stale answer went instead: no client was refused
        }
        return answer == null ? Outcome.DROPPED : Outcome.ANSWERED;
    }

    /** The refusal {@link #refuse} sent back is about to leave, as {@code source} made it. */
    private void countRefusal(Answer.Source source) {
        if (source == Answer.Source.CACHE) {
            return; // a stale answer instead
        }
        refused = true;
        limited[refusing.ordinal()].increment();
        limitedByProof[refusingVerified ? 1 : 0].increment();
        if (refusingPerClient) {
            limitedPerClient.increment();
        }
    }

    @Override
    public void endOfBurst() {
        decisions.endOfBurst();
    }

    @Override
    public int parked() {
        return decisions.parked();
    }
}
