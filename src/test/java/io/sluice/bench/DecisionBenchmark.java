package io.sluice.bench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.config.LimitSettings;
import io.sluice.backend.chronicle.ChronicleCounters;
import io.sluice.domain.DomainProbe;
import io.sluice.domain.RegistrableDomains;
import io.sluice.limit.Algorithm;
import io.sluice.limit.Clock;
import io.sluice.limit.CounterStore;
import io.sluice.limit.Decide;
import io.sluice.limit.DomainLimiter;
import io.sluice.limit.HeapCounters;
import io.sluice.limit.LimitRules;
import io.sluice.limit.Policy;
import io.sluice.limit.PolicyTable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One limiting decision as the query handler makes it: reduce the wire name to its registrable
 * domain, then count it, with {@code tracked} domains already in the table. The limit is never
 * reached, so every query takes the full path (a refusal writes nothing and is cheaper). Run with
 * {@code -t 1} and {@code -t 2}.
 *
 * <p>Each invocation first writes a fresh name (a random label in front of a random tracked
 * domain) into one small buffer, as a just-received packet would be: hot in cache. Reading names
 * from a big pre-made array instead would add cache misses a forwarder does not have.
 * {@link #writeNameOnly} measures that writing alone, to be subtracted.
 *
 * <p>{@link #refuseOneDomain} is the other case: random subdomains of one registrable domain, far
 * over its budget, from every thread at once, as a flood on many cores. Its decisions a second at
 * {@code -t 2} against {@code -t 1} say whether the domain's counter stays a shared cache line
 * (docs/benchmarks.md, "One domain from every core").
 *
 * <p>The clock read is measured apart ({@link #decide} against {@link #decideTimeGiven}): it
 * costs 25-50 ns on the benchmark machines, and a query pays it once, to whichever stage asks
 * first ({@code Query.now}).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgs = {"-Xmx4g"})
public class DecisionBenchmark {

    @State(Scope.Benchmark)
    public static class Table {
        @Param({"FIXED_WINDOW", "SLIDING_WINDOW", "TOKEN_BUCKET"})
        LimitSettings.Algorithm algorithm;

        @Param({"1", "10000", "1000000"})
        int tracked;

        /**
         * memory, or chronicle (a state file in a temporary directory; the JVM needs the module
         * flags of the jar manifest: {@code -jvmArgsAppend "--add-exports=..."}).
         */
        @Param({"memory"})
        String store;

        RegistrableDomains psl;
        DomainLimiter limiter;
        final Clock clock = Clock.system();
        private CounterStore counters;
        private Path file;

        @Setup(Level.Trial)
        public void setUp() throws Exception {
            psl = RegistrableDomains.fromGuava();
            Policy policy = Policy.of(Integer.MAX_VALUE, Duration.ofHours(1), 0);
            if (store.equals("chronicle")) {
                System.setProperty("chronicle.analytics.disable", "true");
                file = Files.createTempDirectory("sluice-bench").resolve("counters.dat");
                counters = ChronicleCounters.open(file, 2_000_000, false, k -> policy);
            } else {
                counters = new HeapCounters();
            }
            limiter = new DomainLimiter(Algorithm.of(algorithm), counters, LimitRules.of(new PolicyTable(policy, Map.of())), 2_000_000,
                    clock);
            DomainProbe p = new DomainProbe();
            for (int d = 0; d < tracked; d++) {
                psl.reduce(Workload.domain(d), p);
                Decide.refusedBy(limiter, p);
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            counters.close();
            if (file != null) {
                Files.deleteIfExists(file);
                Files.deleteIfExists(file.getParent());
            }
        }
    }

    /** A thread's packet buffer and the names it writes there. */
    public abstract static class Names {
        final ByteBuf packet = Unpooled.directBuffer(256);
        final DomainProbe probe = new DomainProbe();
        long seed = Thread.currentThread().getId() * 0x9E3779B97F4A7C15L + 1;
        int tracked;
        /** A query's time, read once before the measurement (a window of an hour never rolls over). */
        long now;

        /** Writes x&lt;8 hex&gt;.d&lt;n&gt;.&lt;suffix&gt; for a random tracked n. */
        void nextName() {
            seed ^= seed << 13;
            seed ^= seed >>> 7;
            seed ^= seed << 17;
            int d = (int) ((seed >>> 1) % tracked);
            ByteBuf b = packet.clear();
            b.writeByte(9).writeByte('x');
            long r = seed;
            for (int i = 0; i < 8; i++, r >>>= 4) {
                b.writeByte(Character.forDigit((int) (r & 15), 16));
            }
            int digits = d < 10 ? 1 : (int) Math.log10(d) + 1;
            b.writeByte(digits + 1).writeByte('d');
            for (int i = digits - 1, v = d; i >= 0; i--, v /= 10) {
                b.setByte(b.writerIndex() + i, '0' + v % 10);
            }
            b.writerIndex(b.writerIndex() + digits);
            byte[] suffix = Workload.WIRE_SUFFIXES[d % Workload.WIRE_SUFFIXES.length];
            b.writeBytes(suffix);
        }
    }

    @State(Scope.Thread)
    public static class Queries extends Names {
        @Setup(Level.Trial)
        public void setUp(Table t) {
            tracked = t.tracked;
            now = t.clock.epochNanos();
        }
    }

    /** One domain over its budget (one query an hour, spent): every decision a refusal. */
    @State(Scope.Benchmark)
    public static class OverBudget {
        RegistrableDomains psl;
        DomainLimiter limiter;
        final Clock clock = Clock.system();
        private CounterStore counters;

        @Setup(Level.Trial)
        public void setUp() {
            psl = RegistrableDomains.fromGuava();
            counters = new HeapCounters();
            Policy policy = Policy.of(1, Duration.ofHours(1), 0);
            limiter = new DomainLimiter(Algorithm.of(LimitSettings.Algorithm.FIXED_WINDOW), counters,
                    LimitRules.of(new PolicyTable(policy, Map.of())), 1000, clock);
            DomainProbe p = new DomainProbe();
            psl.reduce(Workload.domain(0), p);
            if (Decide.refusedBy(limiter, p) != DomainLimiter.NONE || Decide.refusedBy(limiter, p) == DomainLimiter.NONE) {
                throw new IllegalStateException("the domain's one query was not allowed, or the second was");
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            counters.close();
        }
    }

    @State(Scope.Thread)
    public static class OneDomainQueries extends Names {
        @Setup(Level.Trial)
        public void setUp(OverBudget t) {
            tracked = 1;
            now = t.clock.epochNanos();
        }
    }

    /** As the limit stage decides with the cache off: the query's clock read first, then its name. */
    @Benchmark
    public int decide(Table t, Queries q) {
        return decide(t.psl, t.limiter, t.clock, q);
    }

    /**
     * With the query's time already read, as the cache stage (on by default) reads it before the
     * limit stage: {@link #decide} without its clock read.
     */
    @Benchmark
    public int decideTimeGiven(Table t, Queries q) {
        q.nextName();
        t.psl.reduce(q.packet, 0, q.packet.writerIndex(), q.probe);
        return refusedBy(t.limiter, q.probe, q.now);
    }

    /** The clock read after the name is reduced and its counter found, as the limiter did before. */
    @Benchmark
    public int decideReadingClockLast(Table t, Queries q) {
        q.nextName();
        t.psl.reduce(q.packet, 0, q.packet.writerIndex(), q.probe);
        return Decide.refusedBy(t.limiter, q.probe);
    }

    /** A random subdomain of the one domain over its budget, decided: always refused. */
    @Benchmark
    public int refuseOneDomain(OverBudget t, OneDomainQueries q) {
        return decide(t.psl, t.limiter, t.clock, q);
    }

    /** A fresh name, the query's clock read, the name reduced and counted. */
    private static int decide(RegistrableDomains psl, DomainLimiter limiter, Clock clock, Names q) {
        q.nextName();
        long now = clock.epochNanos();
        psl.reduce(q.packet, 0, q.packet.writerIndex(), q.probe);
        return refusedBy(limiter, q.probe, now);
    }

    private static int refusedBy(DomainLimiter limiter, DomainProbe domain, long now) {
        int c = limiter.counterFor(domain);
        return c == DomainLimiter.NONE || limiter.tryAcquire(c, domain, now) ? DomainLimiter.NONE : c;
    }

    @Benchmark
    public int writeNameOnly(Table t, Queries q) {
        q.nextName();
        return q.packet.writerIndex();
    }
}
