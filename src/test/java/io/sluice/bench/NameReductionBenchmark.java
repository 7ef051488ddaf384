package io.sluice.bench;

import com.google.common.net.InternetDomainName;
import io.netty.buffer.ByteBuf;
import io.sluice.domain.DomainProbe;
import io.sluice.domain.RegistrableDomains;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Query name to registrable domain, on random subdomains (the flood pattern): sluice's wire-byte
 * matcher against Guava's {@code InternetDomainName.topPrivateDomain()} on the same names.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class NameReductionBenchmark {
    private RegistrableDomains psl;
    private ByteBuf[] wire;
    private String[] text;
    private final DomainProbe probe = new DomainProbe();
    private int i;

    @Setup
    public void setUp() {
        psl = RegistrableDomains.fromGuava();
        Workload w = new Workload(4096, 5000, 1);
        wire = w.wireNames();
        text = w.textNames();
    }

    @Benchmark
    public int sluiceWire() {
        ByteBuf b = wire[i++ & (wire.length - 1)];
        psl.reduce(b, 0, b.writerIndex(), probe);
        return probe.hashCode();
    }

    @Benchmark
    public String guavaTopPrivateDomain() {
        return InternetDomainName.from(text[i++ & (text.length - 1)]).topPrivateDomain().toString();
    }
}
