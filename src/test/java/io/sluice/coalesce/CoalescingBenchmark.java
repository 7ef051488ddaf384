package io.sluice.forward;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.sluice.metrics.Registry;
import io.sluice.testing.RecordingRoute;
import io.sluice.wire.QueryView;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
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
 * What coalescing adds to a query that misses and joins nothing, the forward path's usual case:
 * its key read and hashed, a probe of the loop's table, its registration as a leader, and its
 * removal once answered ({@code missLeadAnswer}); against reading the same query's OPT alone, as
 * the forwarder does for the UDP size anyway ({@code readOnly}). {@code inFlight} queries wait at
 * once, each a distinct name, as at a loop's saturation. Here, beside the class it measures, since
 * it needs its package's access; {@code scripts/jmh Coalescing} runs it.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class CoalescingBenchmark {
    @Param({"16", "400"})
    int inFlight;

    private static final int NAMES = 4096;
    private final ByteBuf[] queries = new ByteBuf[NAMES];
    private final QueryView[] views = new QueryView[NAMES];
    private PendingQuery[] leaders;
    private Coalescing table;
    private final RecordingRoute route = RecordingRoute.datagram(new InetSocketAddress("192.0.2.7", 5353));
    private final io.sluice.wire.QueryEdns edns = new io.sluice.wire.QueryEdns();
    private int next;

    @Setup
    public void setUp() throws Exception {
        table = new Coalescing(100, 1232, new ForwardMeters(new Registry(), List.of()));
        leaders = new PendingQuery[inFlight];
        for (int i = 0; i < inFlight; i++) {
            leaders[i] = new PendingQuery(i, 0, 0);
        }
        for (int i = 0; i < NAMES; i++) {
            Message m = Message.newQuery(Record.newRecord(Name.fromString("host-" + i + ".example-domain.com."),
                    Type.A, DClass.IN));
            m.addRecord(new OPTRecord(1232, 0, 0), Section.ADDITIONAL);
            byte[] wire = m.toWire();
            queries[i] = PooledByteBufAllocator.DEFAULT.directBuffer(wire.length).writeBytes(wire);
            views[i] = new QueryView();
            views[i].read(queries[i]);
        }
    }

    @TearDown
    public void tearDown() {
        for (ByteBuf q : queries) {
            q.release();
        }
    }

    /** The oldest waiting query is answered, and a new one misses, leads and waits in its place. */
    @Benchmark
    public Object missLeadAnswer() {
        int n = next++;
        PendingQuery q = leaders[n % inFlight];
        Object joined = table.end(q);
        int i = n & (NAMES - 1);
        if (!table.join(queries[i], views[i], route, 0, null)) {
            table.lead(q);
        }
        return joined;
    }

    /** The OPT read alone. */
    @Benchmark
    public boolean readOnly() {
        int i = next++ & (NAMES - 1);
        return edns.read(queries[i], views[i]);
    }
}
