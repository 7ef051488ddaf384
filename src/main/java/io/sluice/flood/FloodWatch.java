package io.sluice.flood;

import io.netty.buffer.ByteBuf;
import io.sluice.domain.DomainProbe;
import io.sluice.limit.DomainLimiter;
import io.sluice.limit.Limits;
import io.sluice.pipeline.Answer;
import io.sluice.pipeline.AnswerSide;
import io.sluice.pipeline.Query;
import io.sluice.wire.QueryView;
import io.sluice.wire.Wire;
import io.sluice.wire.ZoneTransfer;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * The limit stage's answer side, one loop's feed of {@link Floods}: each answer an upstream gives
 * (a cache miss, with the cache on) is counted against its domain's counter, NXDOMAIN or not. A domain without a counter of its
 * own (no budget, or past the table's bound) is not watched.
 *
 * <p>The limit stage notes in the query the counter it decided on ({@link DomainLimiter#answerNote}), and the
 * forwarder hands the note back with the answer, carrying it without knowing what it is: reducing
 * each answer's name again and looking its counter up would double the work of a decision on
 * every answer (docs/benchmarks.md, "Flood"). The name is reduced here only for a log line, or for a query
 * without the note, or whose counter's slot holds another domain by now.
 */
final class FloodWatch implements AnswerSide, Supplier<String> {
    private final Limits limits;
    private final Floods floods;
    private final LongAdder detected;
    private final DomainProbe domain = new DomainProbe();
    /** The answer being counted, for {@link #get}: valid during {@link #answer} only. */
    private ByteBuf query;
    private QueryView view;

    FloodWatch(Limits limits, Floods floods, LongAdder detected) {
        this.limits = limits;
        this.floods = floods;
        this.detected = detected;
    }

    /** Counts an upstream's answer to a query (not a zone transfer's last message) against its domain. */
    @Override
    public void answer(Answer a) {
        DomainLimiter limiter = limits.limiter();
        if (a.source() != Answer.Source.UPSTREAM || !limiter.counting() || !a.view().hasQuestion()
                || ZoneTransfer.isTransfer(a.view().qtype())) {
            return;
        }
        ByteBuf reply = a.message();
        long note = a.note();
        this.query = a.query();
        this.view = a.view();
        int slot = note == Query.NO_NOTE ? DomainLimiter.NONE : limiter.notedSlot(note);
        if (slot == DomainLimiter.NONE) {
            slot = limiter.existing(reduced()); // not noted, or the slot emptied and taken by another domain since
        }
        if (slot != DomainLimiter.NONE && floods.answered(limiter, slot, this, Wire.rcode(reply) == Wire.RCODE_NXDOMAIN)
                == Floods.Change.ENTERED) {
            detected.increment();
        }
        this.query = null;
        this.view = null;
    }

    /** The registrable domain of the answer being counted: for the line a change of flood state writes. */
    @Override
    public String get() {
        return reduced().toString();
    }

    private DomainProbe reduced() {
        limits.domains().reduce(query, view.nameStart(), view.nameEnd(), domain);
        return domain;
    }
}
