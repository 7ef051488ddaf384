package io.sluice.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.sluice.metrics.Registry;
import io.sluice.testing.Dns;
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
    private final List<ByteBuf> answers = new ArrayList<>();
    private final Responder responder = (client, socket, address, message) -> answers.add(message);
    private final EmbeddedChannel client = new EmbeddedChannel();
    private final LongAdder internalErrors = new LongAdder();

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
        return new Pipeline(client.eventLoop(), responder, all, new InternalErrors(internalErrors), () -> ++clockReads);
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
        assertEquals(Outcome.ANSWERED, p.handleDatagram(query(7), null, CLIENT, null));
        assertEquals(List.of("a:7", "b:7"), trace, "c is never reached");
    }

    @Test
    void aBadMessageEndsAtTheCheckWithItsAnswer() {
        Pipeline p = pipeline(noting("a", Outcome.ANSWERED));
        ByteBuf noQuestion = Unpooled.wrappedBuffer(new byte[] {0, 9, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0});
        assertEquals(Outcome.ANSWERED, p.handleDatagram(noQuestion, null, CLIENT, null));
        assertEquals(List.of(), trace);
        assertEquals(1, answers.size(), "FORMERR");
        assertEquals(Outcome.NOT_A_QUERY, p.handleDatagram(Unpooled.wrappedBuffer(new byte[] {1}), null, CLIENT, null));
    }

    @Test
    void aQueryReadsTheClockOnceForAllItsStagesAndTheNextQueryReadsItAgain() {
        Pipeline p = pipeline(timing(Outcome.CONTINUE), timing(Outcome.ANSWERED));
        p.handleDatagram(query(1), null, CLIENT, null);
        p.handleDatagram(query(2), null, CLIENT, null);
        assertEquals(List.of("now:1", "now:1", "now:2", "now:2"), trace);
        assertEquals(2, clockReads);
        Pipeline untimed = pipeline(noting("a", Outcome.ANSWERED));
        untimed.handleDatagram(query(3), null, CLIENT, null);
        assertEquals(2, clockReads, "read only when a stage asks");
    }

    @Test
    void aParkedQueryResumesAfterTheStageThatParkedIt() {
        Parking parking = new Parking();
        Pipeline p = pipeline(noting("before", Outcome.CONTINUE), parking, noting("after", Outcome.ANSWERED));
        assertEquals(Outcome.PARKED, p.handleDatagram(query(1), null, CLIENT, null));
        assertEquals(Outcome.PARKED, p.handleDatagram(query(2), null, CLIENT, null));
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
        p.handleDatagram(query(1), null, CLIENT, null);
        p.handleDatagram(query(2), null, CLIENT, null);
        parking.resume();
        Pipeline unnoted = pipeline(seeing);
        unnoted.handleDatagram(query(3), null, CLIENT, null);
        assertEquals(List.of("park:1", "park:2", "note:101", "note:102", "note:" + UpstreamReplies.NO_NOTE), trace);
        Pipeline once = pipeline(q -> {
            if (q.view().id() == 4) {
                q.answerNote(7);
            }
            return Outcome.CONTINUE;
        }, seeing);
        once.handleDatagram(query(4), null, CLIENT, null);
        once.handleDatagram(query(5), null, CLIENT, null);
        assertEquals(List.of("note:7", "note:" + UpstreamReplies.NO_NOTE), trace.subList(5, 7), "a new query starts with none");
    }

    @Test
    void aQueryPassingEveryStageIsAnInternalErrorAndDropped() {
        Pipeline p = pipeline(noting("a", Outcome.CONTINUE));
        assertEquals(Outcome.DROPPED, p.handleDatagram(query(3), null, CLIENT, null));
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
        assertEquals(Outcome.PARKED, p.handleDatagram(query(4), null, CLIENT, null));
        assertEquals(Outcome.PARKED, p.handleDatagram(query(5), null, CLIENT, null));
        parking.resume(); // 4 throws as it resumes; 5 goes on
        assertEquals(List.of("park:4", "park:5", "after:5"), trace);
        assertEquals(1, internalErrors.sum());
        Pipeline direct = pipeline(failing, noting("after", Outcome.ANSWERED));
        assertEquals(Outcome.DROPPED, direct.handleDatagram(query(4), null, CLIENT, null));
        assertEquals(Outcome.ANSWERED, direct.handleDatagram(query(6), null, CLIENT, null), "the next query is handled");
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
}
