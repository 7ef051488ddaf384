package io.sluice.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.sluice.metrics.Registry;
import io.sluice.testing.Dns;
import io.sluice.testing.RecordingRoute;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Type;

/** The stage list alone: order, what ends a run, parking and resuming after the parking stage. */
class PipelineTest {
    private static final InetSocketAddress CLIENT = new InetSocketAddress("127.0.0.1", 5555);

    private final List<String> trace = new ArrayList<>();
    private final RecordingRoute route = RecordingRoute.datagram(CLIENT);
    private final List<ByteBuf> answers = route.sent;
    private final EmbeddedChannel client = new EmbeddedChannel();
    private final LongAdder internalErrors = new LongAdder();
    private final Registry metrics = new Registry();

    /** A stage that notes its name and the query's ID, then gives {@code outcome}. */
    private Stage noting(String name, Outcome outcome) {
        return q -> {
            trace.add(name + ":" + q.view().id());
            return outcome;
        };
    }

    /** Parks every query it sees; {@link #resume} sends the parked ones on. */
    private final class Parking implements Stage {
        final List<ParkedQuery> parked = new ArrayList<>();
        Continuation next;
        int bursts;

        @Override
        public Outcome handle(Query q) {
            trace.add("park:" + q.view().id());
            parked.add(q.park());
            return Outcome.PARKED;
        }

        @Override
        public void attach(Continuation next) {
            this.next = next;
        }

        @Override
        public void endOfBurst() {
            bursts++;
        }

        @Override
        public int parked() {
            return parked.size();
        }

        void resume() {
            for (ParkedQuery p : parked) {
                next.proceed(next.reopen(p));
                p.release();
            }
            parked.clear();
        }
    }

    /** The clock each query's time is read from: it counts its reads. */
    private long clockReads;

    private Pipeline pipeline(Stage... stages) {
        List<Stage> all = new ArrayList<>(List.of(new MessageCheck(new Registry())));
        all.addAll(List.of(stages));
        return new Pipeline(client.eventLoop(), null, all, new InternalErrors(internalErrors), () -> ++clockReads,
                Pipeline.Meters.declaredIn(metrics), null);
    }

    /** A stage that notes the query's time, then gives {@code outcome}. */
    private Stage timing(Outcome outcome) {
        return q -> {
            trace.add("now:" + q.now());
            return outcome;
        };
    }

    private static ByteBuf query(int id) {
        return Unpooled.wrappedBuffer(Dns.query(id, "www.example.com.", Type.A));
    }

    @Test
    void stagesRunInOrderUntilOneDecides() {
        Pipeline p = pipeline(noting("a", Outcome.CONTINUE), noting("b", Outcome.ANSWERED), noting("c", Outcome.ANSWERED));
        assertEquals(Outcome.ANSWERED, p.handle(query(7), route));
        assertEquals(List.of("a:7", "b:7"), trace, "c is never reached");
    }

    @Test
    void aBadMessageEndsAtTheCheckWithItsAnswer() {
        Pipeline p = pipeline(noting("a", Outcome.ANSWERED));
        ByteBuf noQuestion = Unpooled.wrappedBuffer(new byte[] {0, 9, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0});
        assertEquals(Outcome.ANSWERED, p.handle(noQuestion, route));
        assertEquals(List.of(), trace);
        assertEquals(1, answers.size(), "FORMERR");
        assertEquals(Outcome.NOT_A_QUERY, p.handle(Unpooled.wrappedBuffer(new byte[] {1}), route));
    }

    @Test
    void aQueryReadsTheClockOnceForAllItsStagesAndTheNextQueryReadsItAgain() {
        Pipeline p = pipeline(timing(Outcome.CONTINUE), timing(Outcome.ANSWERED));
        p.handle(query(1), route);
        p.handle(query(2), route);
        assertEquals(List.of("now:1", "now:1", "now:2", "now:2"), trace);
        assertEquals(2, clockReads);
        Pipeline untimed = pipeline(noting("a", Outcome.ANSWERED));
        untimed.handle(query(3), route);
        assertEquals(2, clockReads, "read only when a stage asks");
    }

    @Test
    void aParkedQueryResumesAfterTheStageThatParkedIt() {
        Parking parking = new Parking();
        Pipeline p = pipeline(noting("before", Outcome.CONTINUE), parking, noting("after", Outcome.ANSWERED));
        assertEquals(Outcome.PARKED, p.handle(query(1), route));
        assertEquals(Outcome.PARKED, p.handle(query(2), route));
        p.endOfBurst();
        assertEquals(1, parking.bursts);
        assertEquals(2, p.parked());
        parking.resume();
        assertEquals(List.of("before:1", "park:1", "before:2", "park:2", "after:1", "after:2"), trace,
                "resumed with the message read anew, past the stages before");
        assertEquals(0, p.parked());
    }

    @Test
    void aNoteLeftForTheAnswerKeepsToItsQueryThroughParkingAndNotToTheNext() {
        Stage noting = q -> {
            q.answerNote(100 + q.view().id());
            return Outcome.CONTINUE;
        };
        Stage seeing = q -> {
            trace.add("note:" + q.answerNote());
            return Outcome.ANSWERED;
        };
        Parking parking = new Parking();
        Pipeline p = pipeline(noting, parking, seeing);
        p.handle(query(1), route);
        p.handle(query(2), route);
        parking.resume();
        Pipeline unnoted = pipeline(seeing);
        unnoted.handle(query(3), route);
        assertEquals(List.of("park:1", "park:2", "note:101", "note:102", "note:" + Query.NO_NOTE), trace);
        Pipeline once = pipeline(q -> {
            if (q.view().id() == 4) {
                q.answerNote(7);
            }
            return Outcome.CONTINUE;
        }, seeing);
        once.handle(query(4), route);
        once.handle(query(5), route);
        assertEquals(List.of("note:7", "note:" + Query.NO_NOTE), trace.subList(5, 7), "a new query starts with none");
    }

    @Test
    void aQueryPassingEveryStageIsAnInternalErrorAndDropped() {
        Pipeline p = pipeline(noting("a", Outcome.CONTINUE));
        assertEquals(Outcome.DROPPED, p.handle(query(3), route));
        assertEquals(1, internalErrors.sum());
    }

    @Test
    void aStageThatThrowsDropsThatQueryAloneAndIsCounted() {
        Stage failing = q -> {
            if (q.view().id() == 4) {
                throw new IllegalArgumentException("a bug met by query 4");
            }
            return Outcome.CONTINUE;
        };
        Parking parking = new Parking();
        Pipeline p = pipeline(parking, failing, noting("after", Outcome.ANSWERED));
        assertEquals(Outcome.PARKED, p.handle(query(4), route));
        assertEquals(Outcome.PARKED, p.handle(query(5), route));
        parking.resume(); // 4 throws as it resumes; 5 goes on
        assertEquals(List.of("park:4", "park:5", "after:5"), trace);
        assertEquals(1, internalErrors.sum());
        Pipeline direct = pipeline(failing, noting("after", Outcome.ANSWERED));
        assertEquals(Outcome.DROPPED, direct.handle(query(4), route));
        assertEquals(Outcome.ANSWERED, direct.handle(query(6), route), "the next query is handled");
        assertEquals(2, internalErrors.sum());
        Stage badBurst = new Stage() {
            @Override
            public Outcome handle(Query q) {
                return Outcome.CONTINUE;
            }

            @Override
            public void endOfBurst() {
                throw new IllegalStateException("a bug at the end of a burst");
            }
        };
        Pipeline bursts = pipeline(badBurst, parking);
        bursts.endOfBurst();
        assertEquals(1, parking.bursts, "the stage after the failing one still sees the burst end");
        assertEquals(3, internalErrors.sum());
        assertEquals(badBurst.getClass().getName(), InternalErrors.nameOf(badBurst),
                "the log line names an anonymous stage by its full name, not by its empty simple name");
        assertEquals("Parking", InternalErrors.nameOf(parking));
    }

    /** A stage that passes queries on, with {@code side} as its answer side. */
    private static Stage withAnswerSide(AnswerSide side) {
        return new Stage() {
            @Override
            public Outcome handle(Query q) {
                return Outcome.CONTINUE;
            }

            @Override
            public AnswerSide answers() {
                return side;
            }
        };
    }

    /** A stage that passes queries on and notes, on the way back, each answer's maker and ID. */
    private Stage seeingAnswers(String name) {
        return withAnswerSide(a -> trace.add(name + " saw " + a.source() + ":"
                + (a.message() == null ? "nothing" : a.message().getUnsignedShort(0))));
    }

    /** A last stage that answers as an upstream would, later, through its continuation's way back. */
    private final class Upstream implements Stage {
        Continuation back;
        final List<ParkedQuery> asked = new ArrayList<>();

        @Override
        public Outcome handle(Query q) {
            asked.add(q.park());
            return Outcome.ANSWERED;
        }

        @Override
        public void attach(Continuation next) {
            back = next;
        }

        /** Answers each query asked with {@code reply} (made of its query), made by {@code source}; returns who made what left. */
        List<Answer.Source> answerAll(java.util.function.Function<ByteBuf, ByteBuf> reply, Answer.Source source) {
            List<Answer.Source> left = new ArrayList<>();
            for (ParkedQuery p : asked) {
                io.sluice.wire.QueryView view = new io.sluice.wire.QueryView();
                view.read(p.message());
                left.add(back.back(new Answer().fill(p.message(), view, p.route(), p.answerNote(),
                        reply.apply(p.message()), source)));
                p.release();
            }
            asked.clear();
            return left;
        }
    }

    private static ByteBuf reply(ByteBuf query) {
        ByteBuf r = query.copy();
        r.setByte(2, 0x80); // QR
        return r;
    }

    @Test
    void anAnswerGoesBackThroughTheAnswerSidesBeforeItsMakerNearestFirstAndLeavesOnce() {
        Upstream upstream = new Upstream();
        Pipeline p = pipeline(seeingAnswers("first"), seeingAnswers("second"), upstream);
        p.handle(query(1), route);
        assertEquals(List.of(Answer.Source.UPSTREAM), upstream.answerAll(PipelineTest::reply, Answer.Source.UPSTREAM));
        assertEquals(List.of("second saw UPSTREAM:1", "first saw UPSTREAM:1"), trace);
        assertEquals(1, answers.size());
        assertEquals(1, metrics.counter("answers", "", "rcode", "NOERROR", "source", "upstream").sum(),
                "counted once, by its maker");

        trace.clear();
        Stage answering = q -> {
            q.answerWithQuestion(0, 5, 0, null);
            return Outcome.ANSWERED;
        };
        Pipeline made = pipeline(seeingAnswers("before"), answering, seeingAnswers("after"));
        made.handle(query(2), route);
        assertEquals(List.of("before saw SLUICE:2"), trace, "not the maker's own side, nor those after it");
        assertEquals(2, answers.size());
        assertEquals(1, metrics.counter("answers", "", "rcode", "REFUSED", "source", "sluice").sum());
    }

    @Test
    void anAnswerSideMayPutAnotherAnswerInItsPlaceWhichTheNearerSidesAndTheClientGet() {
        ByteBuf[] replaced = new ByteBuf[1];
        Stage replacing = withAnswerSide(a -> {
            if (a.source() == Answer.Source.UPSTREAMS_FAILED) {
                replaced[0] = a.message();
                ByteBuf instead = reply(a.query());
                instead.setShort(0, 99);
                a.replace(instead, Answer.Source.CACHE);
            }
        });
        Upstream upstream = new Upstream();
        Pipeline p = pipeline(seeingAnswers("client side"), replacing, upstream);
        p.handle(query(3), route);
        assertEquals(List.of(Answer.Source.CACHE),
                upstream.answerAll(PipelineTest::reply, Answer.Source.UPSTREAMS_FAILED), "who made what left");
        assertEquals(List.of("client side saw CACHE:99"), trace);
        assertEquals(0, replaced[0].refCnt(), "the answer replaced is released");
        assertEquals(99, answers.get(0).getUnsignedShort(0));
    }

    @Test
    void anAnswerSideThatThrowsIsCountedAndTheAnswerGoesOnToTheOthersAndTheClient() {
        Stage failing = withAnswerSide(a -> {
            throw new IllegalStateException("a bug met by an answer");
        });
        Upstream upstream = new Upstream();
        Pipeline p = pipeline(seeingAnswers("nearer the client"), failing, upstream);
        p.handle(query(4), route);
        upstream.answerAll(PipelineTest::reply, Answer.Source.UPSTREAM);
        assertEquals(1, internalErrors.sum());
        assertEquals(List.of("nearer the client saw UPSTREAM:4"), trace);
        assertEquals(1, answers.size(), "the client still gets it");
    }

    @Test
    void anAnswerLargerThanItsUdpLimitLeavesTruncatedWithTheClientsQuestionAndIsCounted() {
        Stage last = new Stage() {
            Continuation back;

            @Override
            public void attach(Continuation next) {
                back = next;
            }

            @Override
            public Outcome handle(Query q) {
                ByteBuf big = Unpooled.buffer().writeBytes(reply(q.message())).writeZero(600);
                back.back(new Answer().fill(q.message(), q.view(), q.route(), q.answerNote(), big,
                        Answer.Source.UPSTREAM).udpLimit(512));
                return Outcome.ANSWERED;
            }
        };
        Pipeline p = pipeline(last);
        ByteBuf q = query(5);
        p.handle(q, route);
        ByteBuf sent = answers.get(0);
        assertEquals(q.readableBytes(), sent.readableBytes(), "the header and question alone");
        assertEquals(0x02, sent.getUnsignedByte(2) & 0x02, "TC");
        assertEquals(1, metrics.counter("upstream_answers_truncated", "").sum());
        RecordingRoute stream = RecordingRoute.stream(CLIENT);
        p.handle(query(6), stream);
        assertEquals(query(6).readableBytes() + 600, stream.sent.get(0).readableBytes(), "over a stream it is whole");
        assertEquals(0, internalErrors.sum());
    }
}
