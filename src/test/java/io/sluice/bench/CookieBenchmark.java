package io.sluice.bench;

import com.google.common.hash.HashFunction;
import com.google.common.hash.Hashing;
import io.sluice.cookie.ServerCookies;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a DNS cookie costs a query: minting a server cookie (RFC 9018: SipHash-2-4 over the client
 * cookie, version and time, and the client's address, 8+8+4 or 8+8+16 octets) and checking one,
 * as {@code cookie.CookieStage} does for every query with a COOKIE; and the same hash through
 * Guava's {@code Hashing.sipHash24}, the library's way, for the comparison its comment cites.
 * The client cookie changes per call, as it does per client.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class CookieBenchmark {
    private static final long NOW_NANOS = 1_800_000_000L * 1_000_000_000L;

    private final ServerCookies cookies = new ServerCookies(new byte[] {
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
    private final HashFunction guava = Hashing.sipHash24(0x0807060504030201L, 0x100f0e0d0c0b0a09L);
    private final InetAddress ipv4;
    private final InetAddress ipv6;
    private final long head = ServerCookies.head(NOW_NANOS / 1_000_000_000L);
    private final long validHash;
    private long client = 0x2464c4abcf10c957L;

    public CookieBenchmark() {
        try {
            ipv4 = InetAddress.getByName("198.51.100.100");
            ipv6 = InetAddress.getByName("2001:db8:220:1:59de:d0f4:8769:82b8");
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
        validHash = cookies.mint(client, head, ipv6);
    }

    @Benchmark
    public long mintIpv4() {
        return cookies.mint(++client, head, ipv4);
    }

    @Benchmark
    public long mintIpv6() {
        return cookies.mint(++client, head, ipv6);
    }

    /** A valid cookie checked: one hash, as a mismatch costs too. */
    @Benchmark
    public boolean checkIpv6() {
        return cookies.valid(0x2464c4abcf10c957L, head, validHash, ipv6, NOW_NANOS);
    }

    /** The IPv6 mint's hash through Guava: a hasher and a hash code per call. */
    @Benchmark
    public long guavaIpv6() {
        byte[] octets = ipv6.getAddress();
        return guava.newHasher(32).putLong(++client).putLong(head).putBytes(octets).hash().asLong();
    }
}
