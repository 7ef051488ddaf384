package io.sluice.bench;

import io.sluice.testing.DatagramRelay;
import io.sluice.testing.StreamRelay;
import java.io.File;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Type;

/**
 * The network faults of docs/benchmarks.md ("Network faults"): each server forwards to an upstream
 * that answers at once ({@link AnsweringUpstream}) through a {@link DatagramRelay} of real datagrams,
 * which loses, delays, reorders, duplicates or black-holes them as a scenario says; a client asks
 * {@code --queries} new names at {@code --rate} a second, each waiting up to 5 s (dig's wait), and
 * counts what comes back. Each server is a command run through {@code sh -c}, with {@code {port}}
 * and {@code {upstream}} replaced; it serves UDP on 127.0.0.1:{port} and forwards to
 * 127.0.0.1:{upstream}, the relay. With {@code --redis PORT}, a command that names {@code {redis}}
 * (a sluice with the Redis backend) reaches the Redis on PORT through a {@link StreamRelay} at
 * {@code {redis}}, and also meets the scenarios on that link.
 *
 * <pre>java -cp ... io.sluice.bench.NetFault [--queries 1000] [--rate 100] [--scenario NAME]... [--redis PORT] LABEL=COMMAND...</pre>
 *
 * Prints per server and scenario: answers (NOERROR), SERVFAILs, queries unanswered after 5 s, p50
 * and p99 of the answers.
 */
public final class NetFault {
    private static final int PORT = 5392;
    private static final long CLIENT_WAIT_NANOS = TimeUnit.SECONDS.toNanos(5);

    /**
     * A fault each way, made fresh for each run: its randomness seeded, its time from the run's
     * start; on the upstream's link (datagrams), or on Redis's ({@code onRedis}: a TCP stream).
     */
    private record Scenario(String name, String says, boolean onRedis, FaultMaker queries, FaultMaker replies) {
        static Scenario upstream(String name, String says, FaultMaker queries, FaultMaker replies) {
            return new Scenario(name, says, false, queries, replies);
        }

        static Scenario redis(String name, String says, FaultMaker calls, FaultMaker replies) {
            return new Scenario(name, says, true, calls, replies);
        }
    }

    @FunctionalInterface
    private interface FaultMaker {
        DatagramRelay.Fault make(long startNanos, long seed);
    }

    private static final List<Scenario> SCENARIOS = List.of(
            Scenario.upstream("none", "no fault", (t, s) -> DatagramRelay.NONE, (t, s) -> DatagramRelay.NONE),
            Scenario.upstream("loss1", "1% lost each way", (t, s) -> DatagramRelay.losing(0.01, s),
                    (t, s) -> DatagramRelay.losing(0.01, s + 1)),
            Scenario.upstream("loss10", "10% lost each way", (t, s) -> DatagramRelay.losing(0.10, s),
                    (t, s) -> DatagramRelay.losing(0.10, s + 1)),
            Scenario.upstream("loss30", "30% lost each way", (t, s) -> DatagramRelay.losing(0.30, s),
                    (t, s) -> DatagramRelay.losing(0.30, s + 1)),
            Scenario.upstream("delay50", "50 ms added toward the upstream, jitter 50% (25-75 ms)",
                    (t, s) -> jittered(50, s), (t, s) -> DatagramRelay.NONE),
            Scenario.upstream("delay300", "300 ms added toward the upstream, jitter 50% (150-450 ms)",
                    (t, s) -> jittered(300, s), (t, s) -> DatagramRelay.NONE),
            Scenario.upstream("reorder", "a fifth of the datagrams each way held 20 ms, overtaken by the next",
                    (t, s) -> holding(0.2, 20, s), (t, s) -> holding(0.2, 20, s + 1)),
            Scenario.upstream("duplicate", "a fifth of the datagrams each way sent twice",
                    (t, s) -> duplicating(0.2, s), (t, s) -> duplicating(0.2, s + 1)),
            Scenario.upstream("blackhole5s", "everything lost both ways for 5 s, from the 2nd second",
                    (t, s) -> blackHole(t, 2000, 7000), (t, s) -> blackHole(t, 2000, 7000)),
            Scenario.upstream("flap2s", "the upstream unreachable every other 2 s (both ways lost)",
                    (t, s) -> flapping(t, 2000), (t, s) -> flapping(t, 2000)),
            Scenario.redis("redis-delay20", "20 ms added each way between sluice and Redis (a 40 ms round trip)",
                    (t, s) -> n -> 20, (t, s) -> n -> 20),
            Scenario.redis("redis-delay50", "50 ms added each way between sluice and Redis, past a 50 ms redis-timeout",
                    (t, s) -> n -> 50, (t, s) -> n -> 50),
            Scenario.redis("redis-blackhole5s", "nothing passes between sluice and Redis for 5 s, from the 2nd second",
                    (t, s) -> blackHole(t, 2000, 7000), (t, s) -> blackHole(t, 2000, 7000)),
            Scenario.redis("redis-flap2s", "Redis unreachable every other 2 s (its connection held, not closed)",
                    (t, s) -> flapping(t, 2000), (t, s) -> flapping(t, 2000)));

    /**
     * With {@code --tcp}: the client asks over TCP, so the servers forward over TCP, through a
     * {@link StreamRelay} on the upstream's port. A stream loses nothing and keeps its order:
     * a lost segment costs TCP a retransmission, at least Linux's least RTO (200 ms) later.
     */
    private static final List<Scenario> TCP_SCENARIOS = List.of(
            Scenario.upstream("none", "no fault", (t, s) -> DatagramRelay.NONE, (t, s) -> DatagramRelay.NONE),
            Scenario.upstream("loss1", "1% of the segments each way retransmitted 200 ms later",
                    (t, s) -> holding(0.01, 200, s), (t, s) -> holding(0.01, 200, s + 1)),
            Scenario.upstream("loss10", "10% of the segments each way retransmitted 200 ms later",
                    (t, s) -> holding(0.10, 200, s), (t, s) -> holding(0.10, 200, s + 1)),
            Scenario.upstream("loss30", "30% of the segments each way retransmitted 200 ms later",
                    (t, s) -> holding(0.30, 200, s), (t, s) -> holding(0.30, 200, s + 1)),
            Scenario.upstream("delay50", "50 ms added toward the upstream, jitter 50% (25-75 ms, in order)",
                    (t, s) -> jittered(50, s), (t, s) -> DatagramRelay.NONE),
            Scenario.upstream("delay300", "300 ms added toward the upstream, jitter 50% (150-450 ms, in order)",
                    (t, s) -> jittered(300, s), (t, s) -> DatagramRelay.NONE),
            Scenario.upstream("blackhole5s", "nothing passes either way for 5 s, from the 2nd second",
                    (t, s) -> blackHole(t, 2000, 7000), (t, s) -> blackHole(t, 2000, 7000)),
            Scenario.upstream("flap2s", "the upstream unreachable every other 2 s (its connections held)",
                    (t, s) -> flapping(t, 2000), (t, s) -> flapping(t, 2000)));

    private NetFault() {
    }

    public static void main(String[] args) throws Exception {
        int queries = 1000;
        int rate = 100;
        int redis = 0;
        boolean tcp = false;
        List<String> only = new ArrayList<>();
        List<String[]> servers = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--queries" -> queries = Integer.parseInt(args[++i]);
                case "--rate" -> rate = Integer.parseInt(args[++i]);
                case "--scenario" -> only.add(args[++i]);
                case "--redis" -> redis = Integer.parseInt(args[++i]);
                case "--tcp" -> tcp = true;
                default -> {
                    int eq = args[i].indexOf('=');
                    if (eq <= 0) {
                        System.err.println("netfault: LABEL=COMMAND expected, not " + args[i]);
                        System.exit(2);
                    }
                    servers.add(new String[] {args[i].substring(0, eq), args[i].substring(eq + 1)});
                }
            }
        }
        boolean withRedis = redis > 0;
        if (!withRedis && servers.stream().anyMatch(s -> s[1].contains("{redis}"))) {
            System.err.println("netfault: a server command names {redis}: --redis PORT is needed");
            System.exit(2);
        }
        List<Scenario> scenarios = (tcp ? TCP_SCENARIOS : SCENARIOS).stream()
                .filter(s -> only.isEmpty() || only.contains(s.name()))
                .filter(s -> withRedis || !s.onRedis()).toList();
        if (scenarios.isEmpty()) {
            System.err.println("netfault: no scenario named " + only + "; there are "
                    + (tcp ? TCP_SCENARIOS : SCENARIOS).stream().map(Scenario::name).toList());
            System.exit(2);
        }
        System.out.printf("netfault: %d queries at %d a second per scenario over %s, each waiting up to 5 s%n", queries,
                rate, tcp ? "TCP" : "UDP");
        for (Scenario s : scenarios) {
            System.out.printf("  %-12s %s%n", s.name(), s.says());
        }
        try (AnsweringUpstream upstream = new AnsweringUpstream(0);
             DatagramRelay relay = new DatagramRelay(new InetSocketAddress("127.0.0.1", upstream.port()));
             StreamRelay streams = tcp ? new StreamRelay(new InetSocketAddress("127.0.0.1", upstream.port()),
                     relay.address().getPort()) : null;
             StreamRelay redisRelay = withRedis ? new StreamRelay(new InetSocketAddress("127.0.0.1", redis)) : null) {
            for (String[] server : servers) {
                boolean usesRedis = server[1].contains("{redis}");
                String command = server[1].replace("{port}", String.valueOf(PORT))
                        .replace("{upstream}", String.valueOf(relay.address().getPort()))
                        .replace("{redis}", withRedis ? String.valueOf(redisRelay.port()) : "");
                run(server[0], command, relay, streams, usesRedis ? redisRelay : null,
                        scenarios.stream().filter(s -> usesRedis || !s.onRedis()).toList(), queries, rate);
            }
        }
    }

    /**
     * Runs the server of {@code command} through each scenario: over TCP when {@code streams} (the
     * upstream's TCP relay) is there; {@code redisRelay} is null when it has no Redis.
     */
    private static void run(String label, String command, DatagramRelay relay, StreamRelay streams,
                            StreamRelay redisRelay, List<Scenario> scenarios, int queries, int rate) throws Exception {
        Process p = new ProcessBuilder("sh", "-c", command).redirectErrorStream(true)
                .redirectOutput(new File("/tmp/netfault-" + label + ".log")).start();
        try {
            waitReady(p, label);
            long seed = 1;
            for (Scenario s : scenarios) {
                long start = System.nanoTime();
                if (s.onRedis()) {
                    redisRelay.faults(s.queries().make(start, seed++), s.replies().make(start, seed++));
                } else if (streams != null) {
                    streams.faults(s.queries().make(start, seed++), s.replies().make(start, seed++));
                } else {
                    relay.queries(s.queries().make(start, seed++));
                    relay.replies(s.replies().make(start, seed++));
                }
                long[] r = ask(label + "-" + s.name(), queries, rate, start, streams != null);
                relay.queries(DatagramRelay.NONE);
                relay.replies(DatagramRelay.NONE);
                for (StreamRelay r2 : new StreamRelay[] {streams, redisRelay}) {
                    if (r2 != null) {
                        r2.faults(DatagramRelay.NONE, DatagramRelay.NONE);
                    }
                }
                System.out.printf("%s %s answers=%d servfail=%d unanswered=%d p50_ms=%.1f p99_ms=%.1f%n", label, s.name(),
                        r[0], r[1], r[2], r[3] / 1e6, r[4] / 1e6);
                // a server that marked its upstream down finds it again before the next scenario
                waitReady(p, label);
            }
        } finally {
            p.destroy();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
    }

    /**
     * Asks {@code queries} new names at {@code rate}, over one TCP connection or UDP; [answers,
     * SERVFAILs, unanswered, p50 nanos, p99 nanos].
     */
    private static long[] ask(String prefix, int queries, int rate, long start, boolean tcp) throws Exception {
        InetSocketAddress server = new InetSocketAddress("127.0.0.1", PORT);
        ByteChannel client;
        if (tcp) {
            SocketChannel c = SocketChannel.open(server);
            c.setOption(StandardSocketOptions.TCP_NODELAY, true);
            client = c;
        } else {
            client = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0)).connect(server);
        }
        AtomicLongArray sent = new AtomicLongArray(queries);
        long[] answeredAt = new long[queries];
        int[] rcodes = new int[queries];
        Arrays.fill(rcodes, -1);
        Thread reader = new Thread(() -> {
            ByteBuffer buf = ByteBuffer.allocate(4096);
            while (client.isOpen()) {
                try {
                    byte[] wire;
                    if (tcp) {
                        ByteBuffer length = ByteBuffer.allocate(2);
                        readFully(client, length);
                        wire = new byte[length.getShort(0) & 0xFFFF];
                        readFully(client, ByteBuffer.wrap(wire));
                    } else {
                        buf.clear();
                        client.read(buf);
                        wire = Arrays.copyOf(buf.array(), buf.position());
                    }
                    long at = System.nanoTime();
                    Message m = new Message(wire);
                    int id = m.getHeader().getID();
                    synchronized (rcodes) {
                        if (id < queries && rcodes[id] < 0) {
                            rcodes[id] = m.getRcode();
                            answeredAt[id] = at;
                        }
                    }
                } catch (java.io.IOException e) {
                    return; // closed: the run is over
                } catch (RuntimeException e) {
                    // a malformed reply: not an answer
                }
            }
        });
        reader.start();
        long gap = TimeUnit.SECONDS.toNanos(1) / rate;
        for (int i = 0; i < queries; i++) {
            long due = start + i * gap;
            while (System.nanoTime() < due) {
                LockSupport.parkNanos(due - System.nanoTime());
            }
            sent.set(i, System.nanoTime());
            byte[] q = query(i, "q" + i + "." + prefix + "-" + start + ".netfault.example.");
            ByteBuffer out = tcp ? ByteBuffer.allocate(2 + q.length).putShort((short) q.length).put(q).flip()
                    : ByteBuffer.wrap(q);
            while (out.hasRemaining()) {
                client.write(out);
            }
        }
        long waitUntil = System.nanoTime() + CLIENT_WAIT_NANOS;
        while (System.nanoTime() < waitUntil && unanswered(rcodes)) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
        client.close();
        reader.join(1000);
        long answers = 0;
        long servfail = 0;
        long unanswered = 0;
        List<Long> latencies = new ArrayList<>();
        for (int i = 0; i < queries; i++) {
            long took = answeredAt[i] - sent.get(i);
            if (rcodes[i] < 0 || took > CLIENT_WAIT_NANOS) {
                unanswered++;
            } else if (rcodes[i] == Rcode.NOERROR) {
                answers++;
                latencies.add(took);
            } else if (rcodes[i] == Rcode.SERVFAIL) {
                servfail++;
            }
        }
        latencies.sort(null);
        long p50 = latencies.isEmpty() ? 0 : latencies.get((latencies.size() - 1) / 2);
        long p99 = latencies.isEmpty() ? 0 : latencies.get((int) Math.ceil(latencies.size() * 0.99) - 1);
        return new long[] {answers, servfail, unanswered, p50, p99};
    }

    private static void readFully(ByteChannel c, ByteBuffer into) throws java.io.IOException {
        while (into.hasRemaining()) {
            if (c.read(into) < 0) {
                throw new java.io.EOFException();
            }
        }
    }

    private static boolean unanswered(int[] rcodes) {
        synchronized (rcodes) {
            return Arrays.stream(rcodes).anyMatch(r -> r < 0);
        }
    }

    /** Until {@code ready.example.} is answered through the relay, fault-free by then. */
    private static void waitReady(Process p, String label) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        try (DatagramChannel client = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            client.connect(new InetSocketAddress("127.0.0.1", PORT));
            client.configureBlocking(false);
            ByteBuffer buf = ByteBuffer.allocate(4096);
            while (System.nanoTime() < deadline) {
                if (!p.isAlive()) {
                    throw new IllegalStateException(label + " exited: see /tmp/netfault-" + label + ".log");
                }
                try {
                    client.write(ByteBuffer.wrap(query(65535, "ready.example.")));
                } catch (java.net.PortUnreachableException e) {
                    // not listening yet
                }
                long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
                while (System.nanoTime() < until) {
                    buf.clear();
                    try {
                        if (client.receive(buf) != null && new Message(Arrays.copyOf(buf.array(), buf.position()))
                                .getRcode() == Rcode.NOERROR) {
                            return;
                        }
                    } catch (java.net.PortUnreachableException e) {
                        break;
                    }
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
                }
            }
        }
        throw new IllegalStateException(label + " never answered ready.example. through the relay");
    }

    private static byte[] query(int id, String name) throws Exception {
        Message m = Message.newQuery(Record.newRecord(Name.fromString(name), Type.A, DClass.IN));
        m.getHeader().setID(id);
        return m.toWire();
    }

    private static DatagramRelay.Fault jittered(long millis, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        return n -> {
            synchronized (random) {
                return millis / 2 + random.nextLong(millis + 1);
            }
        };
    }

    private static DatagramRelay.Fault holding(double share, long millis, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        return n -> {
            synchronized (random) {
                return random.nextDouble() < share ? millis : 0;
            }
        };
    }

    private static DatagramRelay.Fault duplicating(double share, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        return new DatagramRelay.Fault() {
            @Override
            public long delayMillis(int n) {
                return 0;
            }

            @Override
            public int copies(int n) {
                synchronized (random) {
                    return random.nextDouble() < share ? 2 : 1;
                }
            }
        };
    }

    private static DatagramRelay.Fault blackHole(long startNanos, long fromMillis, long toMillis) {
        return n -> {
            long ms = (System.nanoTime() - startNanos) / 1_000_000;
            return ms >= fromMillis && ms < toMillis ? -1 : 0;
        };
    }

    private static DatagramRelay.Fault flapping(long startNanos, long periodMillis) {
        return n -> ((System.nanoTime() - startNanos) / 1_000_000 / periodMillis) % 2 == 1 ? -1 : 0;
    }
}
