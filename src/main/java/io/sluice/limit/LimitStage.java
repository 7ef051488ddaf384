package io.sluice.limit;

import io.sluice.config.LimitSettings;
import io.sluice.domain.DomainProbe;
import io.sluice.pipeline.Outcome;
import io.sluice.pipeline.ParkedQuery;
import io.sluice.pipeline.Query;
import io.sluice.pipeline.Stage;
import io.sluice.wire.Answers;
import io.sluice.wire.Wire;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.LongAdder;

/**
 * The limits stage: reduces the query's name to its registrable domain, counts it against that
 * domain's budget through the loop's {@link Decisions}, and answers a query over it with the
 * action (or, in a dry run, counts it and passes it on). Exempt clients and question-less queries
 * (a request for a server cookie names no domain) pass uncounted. One per event loop.
 */
public final class LimitStage implements Stage, Decisions.Verdicts {
    private final Limits limits;
    private final LongAdder[] limited;
    private final LongAdder limitedDryRun;
    private final Decisions decisions;
    private final DomainProbe domain = new DomainProbe();
    /** This loop's recent decisions, for the busiest domains; null when nobody asks. */
    private final TopDomains.Ring recent;
    /** Budgets per client network and domain, or null; the probe and label it is searched with. */
    private final DomainLimiter perClient;
    private final DomainProbe clientDomain = new DomainProbe();
    private final byte[] clientLabel = new byte[DomainProbe.MAX_LABEL];
    private final int ipv4Prefix;
    private final int ipv6Prefix;
    private final LongAdder limitedPerClient;
    /** Asked first to answer a query over its budget (a stale cached answer); null for nothing. */
    private final Stage whenOver;
    private Continuation next;

    /**
     * @param top      where the busiest domains are worked out, or null for nowhere
     * @param whenOver a stage that may answer a query over its budget before the action does, or null
     */
    public LimitStage(Limits limits, LimitMeters meters, Decisions.Maker maker, Executor loop, TopDomains top,
                      Stage whenOver) {
        this.limits = limits;
        this.whenOver = whenOver;
        this.recent = top == null ? null : top.ring();
        this.perClient = limits.perClient();
        this.ipv4Prefix = limits.perClientSettings().ipv4Prefix();
        this.ipv6Prefix = limits.perClientSettings().ipv6Prefix();
        this.limitedPerClient = meters.limitedPerClient;
        this.limited = meters.limited;
        this.limitedDryRun = meters.limitedDryRun;
        this.decisions = maker.forLoop(loop, this);
    }

    @Override
    public void attach(Continuation next) {
        this.next = next;
    }

    @Override
    public Outcome handle(Query q) {
        if (!limits.limiter().counting() && perClient == null) {
            return Outcome.CONTINUE; // nothing limited yet: only a reload or the admin API would change that
        }
        if (!q.view().hasQuestion() || limits.hasExemptions() && limits.exempt(q.clientIp())) {
            return Outcome.CONTINUE;
        }
        limits.domains().reduce(q.message(), q.view().nameStart(), q.view().nameEnd(), domain);
        if (perClient != null) {
            // The client's budget first: a query it refuses spends none of the domain's.
            clientDomain.under(clientLabel, clientLabel(q.clientIp()), domain);
            Counter cc = perClient.counterFor(clientDomain);
            if (cc != null && !perClient.tryAcquire(cc)) {
                limitedPerClient.increment();
                if (recent != null) {
                    recent.refused(cc);
                }
                Outcome o = refuse(cc, q);
                if (o != Outcome.CONTINUE) {
                    return o;
                } // a dry run: on to the domain's budget, as if the client's had allowed it
            }
        }
        Counter c = limits.limiter().counterFor(domain);
        if (c == null) {
            return Outcome.CONTINUE;
        }
        if (c.policy == Policy.UNLIMITED) { // counted for the busiest domains only, or made unlimited while running
            if (recent != null) {
                recent.allowed(c);
            }
            return Outcome.CONTINUE;
        }
        int d = decisions.decide(c, q);
        if (recent != null) {
            if (d == Decisions.REFUSED) {
                recent.refused(c);
            } else {
                recent.allowed(c); // a parked query's later refusal adds only the refusal
            }
        }
        return switch (d) {
            case Decisions.ALLOWED -> Outcome.CONTINUE;
            case Decisions.REFUSED -> refuse(c, q);
            default -> Outcome.PARKED; // allow() or refuse() below, once the store answers
        };
    }

    /**
     * Writes the label of {@code client}'s network into {@link #clientLabel}: the address's bytes
     * within the prefix, host bits cleared, in hex, then {@code -} and the prefix length
     * ({@code c0000200-24} for 192.0.2.0/24), so that a counter's name reads in the refusal log.
     * An IPv4 address is read without allocating; an IPv6 one costs a copy of its 16 octets.
     *
     * @return the label's length
     */
    private int clientLabel(InetAddress client) {
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
        return n;
    }

    private static final byte[] HEX = "0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    @Override
    public void allow(ParkedQuery parked) {
        next.proceed(next.reopen(parked));
    }

    @Override
    public void refuse(ParkedQuery parked, Counter over) {
        if (recent != null) {
            recent.refusedLater(over);
        }
        Query q = next.reopen(parked);
        Outcome o = refuse(over, q);
        if (o == Outcome.CONTINUE) {
            next.proceed(q);
        } else if (o == Outcome.DROPPED) {
            q.droppedAfterParking();
        }
    }

    /**
     * Acts on a query over {@code over}'s budget: answered by {@link #whenOver} if it can, else
     * answered or dropped by the action, or (dry run) counted and passed on.
     */
    private Outcome refuse(Counter over, Query q) {
        if (limits.dryRun()) {
            limitedDryRun.increment();
            return Outcome.CONTINUE;
        }
        LimitSettings.Action action = limits.action();
        // truncate over UDP exists to make a spoofed source prove itself over TCP: no answer for it here
        if (whenOver != null && !(action == LimitSettings.Action.TRUNCATE && q.overUdp())) {
            Outcome o = whenOver.handle(q);
            if (o != Outcome.CONTINUE) {
                return o;
            }
        }
        limited[action.ordinal()].increment();
        int rcode;
        int flags = Wire.FLAG_RA;
        switch (action) {
            case DROP -> {
                return Outcome.DROPPED;
            }
            case NXDOMAIN -> rcode = Wire.RCODE_NXDOMAIN;
            case TRUNCATE -> {
                // TC invites the client to retry over TCP, proving its address; over TCP there is
                // nothing left to invite, so it is refused.
                rcode = q.overUdp() ? Wire.RCODE_NOERROR : Wire.RCODE_REFUSED;
                flags |= q.overUdp() ? Wire.FLAG_TC : 0;
            }
            default -> rcode = Wire.RCODE_REFUSED;
        }
        q.answerWithQuestion(flags, rcode, Answers.EDE_OTHER, over.refusalText());
        return Outcome.ANSWERED;
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
