package io.sluice.forward;

import io.netty.buffer.ByteBuf;
import io.sluice.wire.QuestionCase;
import io.sluice.wire.Wire;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One loop's 0x20 (randomize-case): each UDP attempt asks the name in letters of random case, and
 * only a reply that echoes them is taken, which a forger off the path cannot guess. The reply's
 * name, and the query's, are given their client's letters back before anyone sees them.
 *
 * <p>An upstream that does not keep case answers every attempt in the wrong letters, and each
 * then times out. After {@link #FALLBACK_TIMEOUTS} such timeouts in a row the loop sends that
 * upstream names as clients wrote them for {@link #BLIND_NANOS}; a forger cannot bring that about
 * while the upstream answers, because a genuine reply in the sent case resets the count. Confined
 * to its loop.
 */
final class CaseRandomizer {
    static final int FALLBACK_TIMEOUTS = 3;
    static final long BLIND_NANOS = TimeUnit.MINUTES.toNanos(10);
    private static final Logger LOG = LoggerFactory.getLogger(CaseRandomizer.class);

    private final boolean on;
    private final ForwardMeters meters;
    private final QueryIds random;
    /** Where {@link QuestionCase} reads and writes a name. */
    private final byte[] nameScratch = new byte[QuestionCase.SCRATCH_BYTES];
    /** Per upstream: attempts in a row that timed out after a reply right but for the name's case. */
    private final int[] mismatchedTimeouts;
    /** Per upstream: sent names as clients wrote them until {@link #blindUntil}. */
    private final boolean[] blind;
    private final long[] blindUntil;

    CaseRandomizer(boolean on, int upstreams, ForwardMeters meters, QueryIds random) {
        this.on = on;
        this.meters = meters;
        this.random = random;
        this.mismatchedTimeouts = new int[upstreams];
        this.blind = new boolean[upstreams];
        this.blindUntil = new long[upstreams];
    }

    /**
     * Gives {@code q}'s next attempt, to upstream {@code upstream}, its letters: its client's, then
     * a random case when 0x20 is on, the attempt goes over UDP, the query keeps no case of its own
     * ({@link PendingQuery#keepCase}), has a name, and the upstream keeps case.
     */
    void prepare(PendingQuery q, int upstream, boolean overStream, long now) {
        restore(q);
        q.caseMismatched = false;
        if (scrambles(upstream, overStream, now) && !q.keepCase && q.questionEnd > Wire.HEADER_BYTES) {
            QuestionCase.scramble(q.query, q.query.readerIndex(), q.questionEnd - 4, q.caseMask, nameScratch, random);
            q.caseScrambled = true;
        }
    }

    /**
     * Gives a query asked again of upstream {@code upstream} over UDP its letters: those of its
     * attempts before, or its client's once the loop sends that upstream names as written; true
     * when it changed them back, so that replies to the attempts before are no longer checked.
     */
    boolean prepareRetry(PendingQuery q, int upstream, long now) {
        q.caseMismatched = false;
        if (q.caseScrambled && !scrambles(upstream, false, now)) {
            restore(q);
            return true;
        }
        return false;
    }

    private boolean scrambles(int upstream, boolean overStream, long now) {
        return on && !overStream && !isBlind(upstream, now);
    }

    /** Gives {@code q.query} the case its client wrote, if its attempt had changed it. */
    void restore(PendingQuery q) {
        if (q.caseScrambled) {
            QuestionCase.flip(q.query, q.query.readerIndex(), q.questionEnd - 4, q.caseMask, nameScratch);
            q.caseScrambled = false;
        }
    }

    /**
     * {@code reply}, a reply to {@code q}'s scrambled attempt with one question in the letters
     * sent, is given its client's letters (its question and the copies of that name in its
     * records): the upstream keeps case.
     */
    void toClientCase(PendingQuery q, ByteBuf reply) {
        mismatchedTimeouts[q.upstream.index()] = 0;
        // the reply's name is the query's, byte for byte
        int replyNameEnd = reply.readerIndex() + (q.questionEnd - 4 - q.query.readerIndex());
        QuestionCase.flip(reply, reply.readerIndex(), replyNameEnd, q.caseMask, nameScratch);
        QuestionCase.flipCopies(reply, reply.readerIndex(), replyNameEnd, replyNameEnd + 4, q.caseMask, nameScratch);
    }

    /** An attempt to {@code u} timed out after a reply right but for the name's case: evidence that it changes case. */
    void mismatchTimedOut(Upstream u, long now) {
        int i = u.index();
        if (++mismatchedTimeouts[i] < FALLBACK_TIMEOUTS || blind[i]) {
            return;
        }
        mismatchedTimeouts[i] = 0;
        blind[i] = true;
        blindUntil[i] = now + BLIND_NANOS;
        meters.caseFallbacks.increment();
        LOG.warn("upstream {} answered {} queries in a row only with the name in another case than sent, and they "
                + "timed out: this thread sends it names as clients wrote them for {} minutes (randomize-case)",
                u, FALLBACK_TIMEOUTS, TimeUnit.NANOSECONDS.toMinutes(BLIND_NANOS));
    }

    private boolean isBlind(int upstream, long now) {
        if (blind[upstream] && now - blindUntil[upstream] >= 0) {
            blind[upstream] = false;
        }
        return blind[upstream];
    }
}
