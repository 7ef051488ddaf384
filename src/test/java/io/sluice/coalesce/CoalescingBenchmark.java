package io.sluice.coalesce;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.sluice.metrics.Registry;
import io.sluice.pipeline.Answer;
import io.sluice.pipeline.InternalErrors;
import io.sluice.pipeline.MessageCheck;
import io.sluice.pipeline.Outcome;
import io.sluice.pipeline.Pipeline;
import io.sluice.pipeline.Query;
import io.sluice.pipeline.Route;
import io.sluice.pipeline.Stage;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * What coalescing adds to a query that joins nothing, the usual case: a pipeline of a last stage
 * that answers at once, with the coalescing stage before it and without ({@code missThrough} against
 * {@code missWithout}): the key read and hashed, the table probed, the leader registered and its
 * route wrapped, and on the way back the answer known as a leader's and the leader removed. Each
 * query a distinct name of 4,096. Here, beside the stage, for its package's access; {@code scripts/jmh
 * Coalescing} runs it.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class CoalescingBenchmark {
    private static final int NAMES = 4096;
    private final ByteBuf[] queries = new ByteBuf[NAMES];
    private final EmbeddedChannel channel = new EmbeddedChannel();
    private Pipeline with;
    private Pipeline without;
    private int next;

    /** A client that takes each answer and lets it go (uncounted as it leaves, through either pipeline). */
    private static final Route CLIENT = Route.nobody(true);

    /** The last stage: answers every query at once with a copy of it, as an upstream's reply. */
    private static final class Answering implements Stage {
        @Override
        public Outcome handle(Query q) {
            ByteBuf m = q.message();
            ByteBuf reply = PooledByteBufAllocator.DEFAULT.directBuffer(m.readableBytes())
                    .writeBytes(m, m.readerIndex(), m.readableBytes());
            reply.setByte(2, reply.getByte(2) | 0x80);
            q.answer(reply, Answer.Source.UPSTREAM);
            return Outcome.ANSWERED;
        }
    }

    @Setup
    public void setUp() throws Exception {
        for (int i = 0; i < NAMES; i++) {
            Message m = Message.newQuery(Record.newRecord(Name.fromString("host-" + i + ".example-domain.com."),
                    Type.A, DClass.IN));
            m.addRecord(new OPTRecord(1232, 0, 0), Section.ADDITIONAL);
            byte[] wire = m.toWire();
            queries[i] = PooledByteBufAllocator.DEFAULT.directBuffer(wire.length).writeBytes(wire);
        }
        Registry r = new Registry();
        InternalErrors errors = new InternalErrors(new LongAdder());
        with = new Pipeline(channel.eventLoop(), null, List.of(new MessageCheck(r),
                new CoalesceStage(100, 1232, new LongAdder()), new Answering()), errors, System::nanoTime,
                Pipeline.Meters.declaredIn(r), null);
        Registry other = new Registry();
        without = new Pipeline(channel.eventLoop(), null, List.of(new MessageCheck(other), new Answering()), errors,
                System::nanoTime, Pipeline.Meters.declaredIn(other), null);
    }

    @TearDown
    public void tearDown() {
        for (ByteBuf q : queries) {
            q.release();
        }
    }

    @Benchmark
    public Outcome missThrough() {
        return with.handle(queries[next++ & (NAMES - 1)], CLIENT);
    }

    @Benchmark
    public Outcome missWithout() {
        return without.handle(queries[next++ & (NAMES - 1)], CLIENT);
    }
}
