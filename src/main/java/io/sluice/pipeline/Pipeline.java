package io.sluice.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.sluice.metrics.Registry;
import io.sluice.transport.Transport;
import io.sluice.transport.WriteBatch;
import io.sluice.wire.Answers;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import org.xbill.DNS.Rcode;

/**
 * The query path of one event loop, both ways: its stages in order, fixed at start. The front end
 * hands it every message with its {@link Route} and the end of every read burst, and knows nothing
 * of what the stages do; only where the pipelines are assembled ({@code io.sluice.Sluice}) says
 * which stages run, in which order.
 *
 * <p>There is one way back. Every answer, whoever made it (a stage, the forwarder, an upstream),
 * passes the answer sides of the stages before its maker, the nearest first ({@link AnswerSide}),
 * and then leaves: cut to the query's UDP size if it was given one, counted by its maker and
 * RCODE, shown to dnstap, and sent through its route, once.
 *
 * <p>The last stage must never {@link Outcome#CONTINUE}: a query that passes every stage would
 * otherwise get no answer.
 */
public final class Pipeline {
    /** The counters of the answers that leave, which every pipeline adds to. */
    public record Meters(LongAdder[] upstream, LongAdder[] cache, LongAdder[] sluice, LongAdder truncated) {
        public static Meters declaredIn(Registry r) {
            return new Meters(byRcode(r, "upstream"), byRcode(r, "cache"), byRcode(r, "sluice"),
                    r.counter("upstream_answers_truncated", "Upstream answers to a UDP client's query larger than it"
                            + " takes (its payload size, at most max-udp-size): a tls:// upstream's, or one that ignored"
                            + " the size; sent truncated (TC) instead."));
        }

        private static LongAdder[] byRcode(Registry r, String source) {
            LongAdder[] counters = new LongAdder[Answers.COUNTED_RCODES];
            for (int rcode = 0; rcode < counters.length; rcode++) {
                counters[rcode] = r.counter("answers", "Answers sent to clients, by RCODE and by who made them.",
                        "rcode", Rcode.string(rcode), "source", source);
            }
            return counters;
        }
    }

    private final EventLoop loop;
    private final WriteBatch writes;
    private final Stage[] stages;
    /** By stage, its answer side, or null. */
    private final AnswerSide[] sides;
    private final Query current;
    private final Query resumed;
    /** What an answer a stage makes goes back as. */
    private final Answer stageAnswer = new Answer();
    private final InternalErrors errors;
    private final Meters meters;
    /** dnstap, shown each answer as it leaves; or null. */
    private final MessageTap tap;

    /**
     * @param writes the loop's writes, which its routes and forwarders share
     * @param clock  the limiters' and the cache's clock, epoch nanoseconds: each query's {@link Query#now}
     * @param tap    what sees each answer as it leaves (dnstap), or null
     */
    public Pipeline(EventLoop loop, WriteBatch writes, List<Stage> stages, InternalErrors errors, LongSupplier clock,
                    Meters meters, MessageTap tap) {
        this.loop = loop;
        this.writes = writes;
        this.errors = errors;
        this.meters = meters;
        this.tap = tap;
        this.stages = stages.toArray(new Stage[0]);
        this.sides = new AnswerSide[this.stages.length];
        this.current = new Query(this, clock);
        this.resumed = new Query(this, clock);
        for (int i = 0; i < this.stages.length; i++) {
            sides[i] = this.stages[i].answers();
            this.stages[i].attach(new After(i + 1));
        }
    }

    /**
     * Runs one message through the stages; the caller keeps and releases it.
     *
     * @param route where it came from and how its answer goes back
     */
    public Outcome handle(ByteBuf message, Route route) {
        current.set(message, route);
        try {
            return run(current, 0);
        } catch (RuntimeException e) {
            // A bug met by this message: it is dropped, as a lost datagram (the client asks again),
            // and the loop reads on; uncaught, it would end this read and, over TCP, the connection.
            errors.caught(stageName(e), "a client's query", "the query is dropped", e);
            return Outcome.DROPPED;
        }
    }

    private Outcome run(Query q, int from) {
        for (int i = from; i < stages.length; i++) {
            q.atStage(i);
            Outcome o = stages[i].handle(q);
            if (o != Outcome.CONTINUE) {
                return o;
            }
        }
        throw new IllegalStateException("the last stage passed a query on");
    }

    /**
     * An answer stage {@code stage} made for {@code q}, on its way back; who made what left.
     * {@code leaving}, when set, is told that before the answer leaves.
     */
    Answer.Source back(int stage, Query q, ByteBuf answer, Answer.Source source, Answer.Leaving leaving) {
        return back(stage, stageAnswer.fill(q.message(), q.view(), q.replyRoute(), q.answerNote(), answer, source),
                leaving);
    }

    /** The way back from stage {@code from}: the answer sides before it, nearest first, then out. */
    private Answer.Source back(int from, Answer a, Answer.Leaving leaving) {
        for (int i = from - 1; i >= 0; i--) {
            if (sides[i] != null) {
                try {
                    sides[i].answer(a);
                } catch (RuntimeException e) {
                    errors.caught(InternalErrors.nameOf(stages[i]), "an answer on its way back", "the answer goes on", e);
                }
            }
        }
        if (leaving != null) {
            leaving.leaving(a.source());
        }
        return leave(a);
    }

    /**
     * Cuts, counts, shows to dnstap and sends an answer at the end of its way back. What throws on
     * the way (a bug) leaves the answer released, never leaked.
     */
    private Answer.Source leave(Answer a) {
        Answer.Source source = a.source();
        Route route = a.route();
        if (a.message() == null) { // a query over its budget, dropped: nothing leaves
            a.take();
            return source;
        }
        try {
            prepareToLeave(a, source, route);
        } catch (RuntimeException e) {
            a.take().release();
            throw e;
        }
        route.send(a.take());
        return source;
    }

    private void prepareToLeave(Answer a, Answer.Source source, Route route) {
        if (route.answersSomebody()) {
            if (a.udpLimit() != 0 && route.datagram() && a.message().readableBytes() > a.udpLimit()) {
                meters.truncated.increment(); // a tls:// upstream's, or one that took no notice of the size
                a.replace(Answers.underUpstreamHeader(Transport.ALLOCATOR, a.query(), a.view(), a.message(), true),
                        source);
            }
            ByteBuf m = a.message();
            switch (source) {
                case UPSTREAM, SHARED -> meters.upstream[Answers.relayedRcode(a.query(), a.view().questionEnd(), m)].increment();
                case CACHE -> meters.cache[Answers.rcode(m)].increment();
                default -> meters.sluice[Answers.rcode(m)].increment();
            }
            if (tap != null) {
                tap.clientResponse(m, route);
            }
        }
    }

    /** The end of a read burst: each stage may send what it parked. */
    public void endOfBurst() {
        for (Stage s : stages) {
            try {
                s.endOfBurst();
            } catch (RuntimeException e) {
                errors.caught(InternalErrors.nameOf(s), "the end of a read burst", "the next stage goes on", e);
            }
        }
    }

    /** The stage a stack's top frames name, for the log line. */
    private String stageName(RuntimeException e) {
        for (StackTraceElement frame : e.getStackTrace()) {
            for (Stage s : stages) {
                if (frame.getClassName().equals(s.getClass().getName())) {
                    return InternalErrors.nameOf(s);
                }
            }
        }
        return "the query path";
    }

    /** Queries parked in the stages; call on the loop. */
    public int parked() {
        int n = 0;
        for (Stage s : stages) {
            n += s.parked();
        }
        return n;
    }

    public EventLoop loop() {
        return loop;
    }

    /** The loop's writes, which its routes back to clients send through. */
    public WriteBatch writes() {
        return writes;
    }

    /** Queries parked now in {@code pipelines}, each counted on its loop; from outside the loops. */
    public static int parkedIn(List<Pipeline> pipelines) {
        int n = 0;
        for (Pipeline p : pipelines) {
            n += OnLoop.count(p.loop(), p::parked);
        }
        return n;
    }

    private final class After implements Stage.Continuation {
        private final int from;

        After(int from) {
            this.from = from;
        }

        @Override
        public Query reopen(ParkedQuery parked) {
            resumed.set(parked.message(), parked.route());
            resumed.atStage(from - 1); // the stage that parked it answers from there
            resumed.answerNote(parked.answerNote());
            resumed.domainHash(parked.domainHash());
            if (parked.answersNobody()) {
                resumed.answerNobody();
            }
            resumed.view().read(parked.message()); // a parked query was read whole before: it reads the same
            return resumed;
        }

        @Override
        public Outcome proceed(Query q) {
            try {
                return run(q, from);
            } catch (RuntimeException e) {
                errors.caught(stageName(e), "a resumed query", "the query is dropped", e);
                q.droppedAfterParking();
                return Outcome.DROPPED;
            }
        }

        @Override
        public Answer.Source back(Answer answer) {
            return Pipeline.this.back(from - 1, answer, null);
        }
    }
}
