package io.sluice.limit;

import io.sluice.pipeline.UpstreamGate;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * {@code limits.max-inflight-per-domain}: how many queries of each registrable domain wait on
 * upstreams now, over every loop, and the gate that keeps a domain from having more than the bound
 * (BIND's {@code fetches-per-zone}). The forwarder asks it before it sends a query and tells it when
 * the query stops waiting; a query joined to an identical one ({@code coalesce}) is not sent and
 * not counted. Each sluice counts its own, whatever backend the budgets live in.
 *
 * <p>One {@link AtomicLongArray} of {@link #SLOTS} words, each a domain's 44-bit fingerprint (from
 * the keyed hash the limits put on a query) beside its count of 20 bits, found by linear probing
 * within {@link #PROBES} words of its home. A count moves by compare-and-set of the whole word, so
 * a count and its domain never tear. A word whose count is 0 is free for any domain; a domain takes
 * the first free word of its run, looking first for its own in the whole run, so that it has one
 * word. The one race that gives a domain two words (a free word ahead of it made free while a new
 * domain takes a later one) lets it go past the bound by what waits in the second word, until
 * those queries end. A run with no free word counts the query nowhere: it is sent, uncounted,
 * rather than refused for want of room.
 */
public final class WaitingPerDomain implements UpstreamGate {
    static final int SLOTS = 1 << 16;
    private static final int MASK = SLOTS - 1;
    static final int PROBES = 32;
    private static final int COUNT_BITS = 20;
    private static final long COUNT = (1L << COUNT_BITS) - 1;
    /** The largest bound: what a word's count holds. */
    public static final int MAX_BOUND = (int) COUNT;

    private final AtomicLongArray words = new AtomicLongArray(SLOTS);
    /** The bound in force; 0: none. A reload changes it. */
    private volatile int bound;

    public WaitingPerDomain(int bound) {
        this.bound = bound;
    }

    /** Whether a bound is in force: the limits then put each query's domain on it. */
    public boolean bounding() {
        return bound > 0;
    }

    /** Puts {@code bound} in force from now on (0: none); queries waiting stay counted. */
    public void bound(int bound) {
        this.bound = bound;
    }

    @Override
    public int enter(long domainHash) {
        int max = bound;
        if (domainHash == 0 || max == 0) {
            return NOT_COUNTED;
        }
        long fingerprint = fingerprint(domainHash);
        int home = (int) domainHash & MASK;
        while (true) {
            int free = -1;
            int own = -1;
            long word = 0;
            for (int k = 0; k < PROBES; k++) {
                int i = (home + k) & MASK;
                long w = words.get(i);
                if (w >>> COUNT_BITS == fingerprint && (w & COUNT) != 0) {
                    own = i;
                    word = w;
                    break;
                }
                if (free < 0 && (w & COUNT) == 0) {
                    free = i;
                    word = w;
                }
            }
            if (own >= 0) {
                if ((word & COUNT) >= max) {
                    return CLOSED;
                }
                if (words.compareAndSet(own, word, word + 1)) {
                    return own;
                }
            } else if (free < 0) {
                return NOT_COUNTED;
            } else if (words.compareAndSet(free, word, fingerprint << COUNT_BITS | 1)) {
                return free;
            }
            // another loop moved the word meanwhile: look again
        }
    }

    @Override
    public void leave(int ticket) {
        if (ticket >= 0) {
            words.getAndDecrement(ticket); // the count is at least this query's: the fingerprint stays
        }
    }

    /** Queries of the domain with {@code domainHash} waiting now, as counted. */
    public int waiting(long domainHash) {
        long fingerprint = fingerprint(domainHash);
        int home = (int) domainHash & MASK;
        int n = 0;
        for (int k = 0; k < PROBES; k++) {
            long w = words.get((home + k) & MASK);
            if (w >>> COUNT_BITS == fingerprint) {
                n += (int) (w & COUNT);
            }
        }
        return n;
    }

    /** The top 44 bits of {@code hash}, never 0: a word of 0 is a free one that no domain had. */
    private static long fingerprint(long hash) {
        long f = hash >>> COUNT_BITS;
        return f == 0 ? 1 : f;
    }
}
