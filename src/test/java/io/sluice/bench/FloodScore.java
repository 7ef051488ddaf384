package io.sluice.bench;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * {@code scripts/flood-score}'s load and its reckoning: a mixed load replayed on loopback through a
 * server under test in front of an upstream of its own, one scenario at a time, each against a
 * fresh server. The legitimate mix runs in every scenario: popular names (Zipf over 1,000 domains),
 * a DNSBL's lookups (a new name each, NXDOMAIN), a CDN's random labels (NOERROR), a search-list
 * suffix (NXDOMAIN) and the victim's real names, every domain under its budget. The attacks are
 * random labels under victim.example (NXDOMAIN), from one client or many, steady or on and off.
 *
 * <p>The upstream counts what reaches it in 100 ms ticks; the clients count what they got back.
 * Per scenario: the time from the attack's start until the victim's random names reaching the
 * upstream fall to at most a fifth of the budget in each second after (and stay there), what
 * reached it against the budget, the legitimate queries refused (or never answered) and the
 * victim's real names answered. Exit 0 when every goal of docs/benchmarks.md's "Flood score" is
 * met, 1 when one is not, 2 on bad arguments.
 *
 * <pre>
 * java -cp ... io.sluice.bench.FloodScore --server 'exec java -jar sluice.jar --listen 127.0.0.1:{port}
 *     --upstream 127.0.0.1:{upstream} --limit {budget}' [--budget 100] [--port 5370] [--scenario NAME]... [--ticks]
 * </pre>
 */
public final class FloodScore {
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final int TICKS_PER_SECOND = 10;
    /** The legitimate mix alone before an attack starts: long enough for the victim's names to be cached. */
    private static final int ATTACK_START_TICK = 30;
    private static final int ATTACK_END_TICK = 130;
    private static final int RUN_TICKS = 150;
    /**
     * What the cut is judged over: a window of the budget (1 s). A shorter span would count the cut
     * budget twice where it straddles two fixed windows' edge (its last queries and the next one's first).
     */
    private static final int JUDGE_TICKS = 10;
    private static final int POPULAR_DOMAINS = 1_000;

    /** What a client sends: its names, its rate and when it is on. */
    private record Load(String kind, boolean legit, double qps, int clients, String network,
                        Function<SplittableRandom, String> names, boolean attack, int onTicks, int offTicks) {
        boolean on(int tick) {
            if (!attack) {
                return tick < RUN_TICKS;
            }
            if (tick < ATTACK_START_TICK || tick >= ATTACK_END_TICK) {
                return false;
            }
            return offTicks == 0 || (tick - ATTACK_START_TICK) % (onTicks + offTicks) < onTicks;
        }
    }

    /** @param slow the victim's zone answers its random names a second late (BIND's fetches-per-zone case) */
    private record Scenario(String name, Load attack, boolean slow) {
        Scenario(String name, Load attack) {
            this(name, attack, false);
        }
    }

    /** How late the victim's zone answers in a slow scenario. */
    private static final long SLOW_NANOS = TimeUnit.SECONDS.toNanos(1);

    public static void main(String[] args) throws Exception {
        String server = null;
        int budget = 100;
        int port = 5370;
        List<String> only = new ArrayList<>();
        boolean ticks = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--ticks")) {
                ticks = true;
                continue;
            }
            if (i + 1 >= args.length) {
                usage("flood-score: " + a + " takes a value");
            }
            switch (a) {
                case "--server" -> server = args[++i];
                case "--budget" -> budget = positive(a, args[++i]);
                case "--port" -> port = positive(a, args[++i]);
                case "--scenario" -> only.add(args[++i]);
                default -> usage("flood-score: unknown argument " + a);
            }
        }
        if (server == null) {
            usage("flood-score: --server is required");
        }
        List<Scenario> scenarios = scenarios(budget);
        if (!only.isEmpty()) {
            scenarios = scenarios.stream().filter(s -> only.contains(s.name)).toList();
            if (scenarios.size() != only.size()) {
                usage("flood-score: --scenario names one of: " + String.join(", ",
                        scenarios(budget).stream().map(Scenario::name).toList()));
            }
        }
        System.out.printf("%-26s %8s %16s %17s %15s%n", "scenario", "cut", "upstream/budget", "legit refused",
                "victim's names");
        boolean met = true;
        long legitSent = 0;
        long legitRefused = 0;
        int attacks = 0;
        int cut = 0;
        for (Scenario s : scenarios) {
            Result r = run(s, budget, port, server);
            System.out.println(r.line(s, budget));
            if (ticks) {
                System.out.println("  the victim's random names upstream, per 100 ms from the attack's start: "
                        + java.util.Arrays.toString(java.util.Arrays.copyOfRange(r.upstreamPerTick, ATTACK_START_TICK, ATTACK_END_TICK)));
            }
            System.out.flush();
            met &= r.meets(s, budget);
            legitSent += r.legitSent;
            legitRefused += r.legitRefused;
            if (s.slow) {
                System.out.printf(Locale.ROOT, "  the victim's queries waiting at the upstream over the attack: most %d,"
                        + " mean %.1f; the other domains' answers: p50 %.2f ms, p99 %.2f ms%n", r.mostWaiting(),
                        r.meanWaiting(), r.otherP50Millis, r.otherP99Millis);
            } else if (s.attack != null) {
                attacks++;
                cut += r.cutTicks(budget) >= 0 && r.cutTicks(budget) <= 2 * TICKS_PER_SECOND ? 1 : 0;
            }
        }
        System.out.printf("attacks cut within two windows: %d of %d; legitimate queries refused or unanswered: "
                + "%d of %d (%.3f%%)%n", cut, attacks, legitRefused, legitSent, 100.0 * legitRefused / Math.max(1, legitSent));
        System.exit(met ? 0 : 1);
    }

    private static List<Scenario> scenarios(int budget) {
        Function<SplittableRandom, String> random = r -> label(r, 12) + ".victim.example";
        return List.of(
                new Scenario("mix (no attack)", null),
                new Scenario("flood 10x, 1 client", new Load("attack", false, 10.0 * budget, 1, "127.0.9.", random, true, 0, 0)),
                new Scenario("flood 100x, 1 client", new Load("attack", false, 100.0 * budget, 1, "127.0.9.", random, true, 0, 0)),
                new Scenario("flood 10x, 50 clients", new Load("attack", false, 10.0 * budget, 50, "127.0.9.", random, true, 0, 0)),
                new Scenario("flood 100x, 50 clients", new Load("attack", false, 100.0 * budget, 50, "127.0.9.", random, true, 0, 0)),
                new Scenario("drip 3x, 200 clients", new Load("attack", false, 3.0 * budget, 200, "127.0.10.", random, true, 0, 0)),
                new Scenario("on/off 10x, 2 s each", new Load("attack", false, 10.0 * budget, 10, "127.0.9.", random, true, 20, 20)),
                // under the budget and the flood watch's pressure: no rate cuts it, each query waits a second
                new Scenario("slow zone 0.7x, 50 clients", new Load("attack", false, 0.7 * budget, 50, "127.0.11.", random,
                        true, 0, 0), true));
    }

    /** The legitimate mix, every domain in it under {@code budget}. */
    private static List<Load> legitimate(int budget) {
        Zipf popular = new Zipf(POPULAR_DOMAINS, 1.0);
        Zipf typed = new Zipf(POPULAR_DOMAINS * 10, 1.0);
        double share = budget / 100.0;
        return List.of(
                new Load("popular", true, 300 * share, 20, "127.0.1.",
                        r -> (r.nextInt(4) == 0 ? "mail.d" : "www.d") + (popular.rank(r.nextDouble()) + 1) + ".example", false, 0, 0),
                new Load("dnsbl", true, 30 * share, 1, "127.0.2.",
                        r -> r.nextInt(256) + "." + r.nextInt(256) + "." + r.nextInt(256) + "." + r.nextInt(256)
                                + ".zen.dnsbl.example", false, 0, 0),
                new Load("cdn", true, 50 * share, 5, "127.0.3.", r -> label(r, 16) + ".cdn.example", false, 0, 0),
                new Load("search list", true, 60 * share, 10, "127.0.4.",
                        r -> "host" + (typed.rank(r.nextDouble()) + 1) + ".corp.example", false, 0, 0),
                new Load("victim's names", true, 20 * share, 1, "127.0.5.",
                        r -> r.nextBoolean() ? "www.victim.example" : "mail.victim.example", false, 0, 0));
    }

    private static Result run(Scenario s, int budget, int port, String serverCommand) throws Exception {
        Upstream upstream = new Upstream(s.slow);
        File log = File.createTempFile("flood-score-server", ".log");
        log.deleteOnExit();
        String command = serverCommand.replace("{port}", Integer.toString(port))
                .replace("{upstream}", Integer.toString(upstream.port())).replace("{budget}", Integer.toString(budget));
        Process server = new ProcessBuilder("bash", "-c", command).redirectErrorStream(true)
                .redirectOutput(log).start();
        try {
            InetSocketAddress target = new InetSocketAddress("127.0.0.1", port);
            if (!answers(target, server)) {
                System.err.println("flood-score: the server never answered on " + target + "; its output: " + log);
                System.exit(1);
            }
            List<Load> loads = new ArrayList<>(legitimate(budget));
            if (s.attack != null) {
                loads.add(s.attack);
            }
            Clients clients = new Clients(loads, target);
            long t0 = System.nanoTime();
            upstream.start(t0);
            clients.run(t0);
            return new Result(clients, upstream.victimRandom, upstream.victimWaiting);
        } finally {
            server.destroy();
            if (!server.waitFor(5, TimeUnit.SECONDS)) {
                server.destroyForcibly().waitFor();
            }
            upstream.close();
        }
    }

    /** Whether the server answers a query within 30 s. */
    private static boolean answers(InetSocketAddress target, Process server) throws IOException {
        try (var socket = new java.net.DatagramSocket()) {
            socket.setSoTimeout(200);
            byte[] q = query(1, "probe.example");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline && server.isAlive()) {
                socket.send(new java.net.DatagramPacket(q, q.length, target));
                try {
                    socket.receive(new java.net.DatagramPacket(new byte[512], 512));
                    return true;
                } catch (SocketTimeoutException e) {
                    // not up yet
                }
            }
            return false;
        }
    }

    /** What one scenario came to. */
    private static final class Result {
        final long legitSent;
        final long legitRefused;
        final long victimNamesSent;
        final long victimNamesAnswered;
        final long[] upstreamPerTick;
        /** The most of the victim's random names waiting at the upstream in each tick. */
        final long[] waitingPerTick;
        final double otherP50Millis;
        final double otherP99Millis;

        Result(Clients c, AtomicLongArray victimRandom, AtomicLongArray victimWaiting) {
            long sent = 0;
            long refused = 0;
            long vs = 0;
            long va = 0;
            for (Clients.Stream st : c.streams) {
                if (!st.load.legit()) {
                    continue;
                }
                sent += st.sent;
                refused += st.sent - st.answered; // REFUSED, another error, or no answer at all
                if (st.load.kind().equals("victim's names")) {
                    vs += st.sent;
                    va += st.answered;
                }
            }
            legitSent = sent;
            legitRefused = refused;
            victimNamesSent = vs;
            victimNamesAnswered = va;
            upstreamPerTick = new long[RUN_TICKS];
            waitingPerTick = new long[RUN_TICKS];
            for (int i = 0; i < RUN_TICKS; i++) {
                upstreamPerTick[i] = victimRandom.get(i);
                waitingPerTick[i] = victimWaiting.get(i);
            }
            otherP50Millis = c.otherLatency.getValueAtPercentile(50) / 1e6;
            otherP99Millis = c.otherLatency.getValueAtPercentile(99) / 1e6;
        }

        long mostWaiting() {
            long most = 0;
            for (int i = ATTACK_START_TICK; i < ATTACK_END_TICK; i++) {
                most = Math.max(most, waitingPerTick[i]);
            }
            return most;
        }

        /** The mean of the ticks' most waiting, from the attack's second second (the first fills up). */
        double meanWaiting() {
            long n = 0;
            for (int i = ATTACK_START_TICK + TICKS_PER_SECOND; i < ATTACK_END_TICK; i++) {
                n += waitingPerTick[i];
            }
            return n / (double) (ATTACK_END_TICK - ATTACK_START_TICK - TICKS_PER_SECOND);
        }

        /**
         * Ticks from the attack's start to the end of the first second from which on the victim's
         * random names reach the upstream at no more than a fifth of the budget; -1 when never.
         */
        int cutTicks(int budget) {
            double most = budget / 5.0 * JUDGE_TICKS / TICKS_PER_SECOND;
            for (int k = ATTACK_START_TICK; k + JUDGE_TICKS <= ATTACK_END_TICK; k++) {
                boolean holds = true;
                for (int j = k; j + JUDGE_TICKS <= ATTACK_END_TICK && holds; j++) {
                    holds = sum(j, j + JUDGE_TICKS) <= most;
                }
                if (holds) {
                    return k + JUDGE_TICKS - ATTACK_START_TICK;
                }
            }
            return -1;
        }

        long sum(int from, int to) {
            long n = 0;
            for (int i = from; i < to; i++) {
                n += upstreamPerTick[i];
            }
            return n;
        }

        /** Upstream queries a second for the victim's random names from {@code from} ticks into the attack, over the budget. */
        double upstreamShare(int from, int budget) {
            int ticks = ATTACK_END_TICK - ATTACK_START_TICK - from;
            return sum(ATTACK_START_TICK + from, ATTACK_END_TICK) * (double) TICKS_PER_SECOND / ticks / budget;
        }

        boolean meets(Scenario s, int budget) {
            boolean ok = legitRefused == 0 && victimNamesAnswered == victimNamesSent;
            if (s.attack != null && !s.slow) { // a slow zone's attack is under every rate: nothing to cut
                int t = cutTicks(budget);
                ok &= t >= 0 && t <= 2 * TICKS_PER_SECOND;
            }
            return ok;
        }

        String line(Scenario s, int budget) {
            String cut = "-";
            String up = "-";
            if (s.attack != null && !s.slow) {
                int t = cutTicks(budget);
                cut = t < 0 ? "never" : String.format(Locale.ROOT, "%.1f s", t / (double) TICKS_PER_SECOND);
                up = String.format(Locale.ROOT, "%.2f (%.2f)", upstreamShare(0, budget),
                        upstreamShare(2 * TICKS_PER_SECOND, budget));
            }
            return String.format(Locale.ROOT, "%-26s %8s %16s %17s %15s", s.name, cut, up,
                    legitRefused + " of " + legitSent, victimNamesAnswered + " of " + victimNamesSent);
        }
    }

    /** The loads' clients: one sender thread pacing every load, one receiver reading every socket. */
    private static final class Clients {
        final List<Stream> streams = new ArrayList<>();
        /** Nanoseconds from sending to the answer, of the legitimate queries but the victim's names: the receiver's. */
        final org.HdrHistogram.Histogram otherLatency = new org.HdrHistogram.Histogram(3);

        /** One load's sockets, one per client address, its counts and its next send. */
        static final class Stream {
            final Load load;
            final DatagramChannel[] channels;
            final SplittableRandom random = new SplittableRandom(42);
            final long intervalNanos;
            long next;
            int nextChannel;
            int id;
            /** Written by the sender, read once both threads are done. */
            long sent;
            /** Written by the receiver: answers NOERROR or NXDOMAIN. */
            long answered;
            /** When each ID went out (the sender's write, then the receiver's read). */
            final java.util.concurrent.atomic.AtomicLongArray sentAt = new java.util.concurrent.atomic.AtomicLongArray(1 << 16);

            Stream(Load load, InetSocketAddress target) throws IOException {
                this.load = load;
                this.channels = new DatagramChannel[load.clients()];
                this.intervalNanos = (long) (1e9 / load.qps());
                for (int i = 0; i < channels.length; i++) {
                    String address = load.network() + (i + 1); // 127/8 is all loopback: a client per address
                    channels[i] = DatagramChannel.open().bind(new InetSocketAddress(address, 0)).connect(target);
                    channels[i].configureBlocking(false);
                }
            }
        }

        Clients(List<Load> loads, InetSocketAddress target) throws IOException {
            for (Load l : loads) {
                streams.add(new Stream(l, target));
            }
        }

        void run(long t0) throws Exception {
            Selector selector = Selector.open();
            for (Stream s : streams) {
                for (DatagramChannel ch : s.channels) {
                    ch.register(selector, SelectionKey.OP_READ, s);
                }
            }
            long end = t0 + RUN_TICKS * TICK_NANOS;
            Thread receiver = new Thread(() -> receive(selector, end + TimeUnit.SECONDS.toNanos(2)), "flood-score-receiver");
            receiver.start();
            ByteBuffer out = ByteBuffer.allocate(512);
            for (Stream s : streams) {
                s.next = t0;
            }
            while (true) {
                long now = System.nanoTime();
                if (now >= end) {
                    break;
                }
                int tick = (int) ((now - t0) / TICK_NANOS);
                long soonest = end;
                for (Stream s : streams) {
                    if (!s.load.on(tick)) {
                        s.next = Math.max(s.next, now); // no backlog of what an off period did not send
                        soonest = Math.min(soonest, now + TICK_NANOS / 10);
                        continue;
                    }
                    while (s.next <= now) {
                        send(s, out);
                        s.next += s.intervalNanos;
                    }
                    soonest = Math.min(soonest, s.next);
                }
                long wait = soonest - System.nanoTime();
                if (wait > 20_000) {
                    LockSupport.parkNanos(wait);
                }
            }
            receiver.join();
            selector.close();
            for (Stream s : streams) {
                for (DatagramChannel ch : s.channels) {
                    ch.close();
                }
            }
        }

        private static void send(Stream s, ByteBuffer out) {
            s.id = (s.id + 1) & 0xffff;
            out.clear();
            out.put(query(s.id, s.load.names().apply(s.random))).flip();
            DatagramChannel ch = s.channels[s.nextChannel];
            s.nextChannel = (s.nextChannel + 1) % s.channels.length;
            s.sentAt.set(s.id, System.nanoTime());
            try {
                if (ch.write(out) > 0) {
                    s.sent++;
                }
            } catch (IOException e) {
                // a refused port: the server went away; what it did not answer counts against it
                s.sent++;
            }
        }

        private void receive(Selector selector, long until) {
            ByteBuffer in = ByteBuffer.allocate(4096);
            try {
                while (System.nanoTime() < until) {
                    selector.select(100);
                    for (SelectionKey k : selector.selectedKeys()) {
                        Stream s = (Stream) k.attachment();
                        DatagramChannel ch = (DatagramChannel) k.channel();
                        while (true) {
                            in.clear();
                            int n;
                            try {
                                n = ch.read(in);
                            } catch (IOException e) {
                                break;
                            }
                            if (n <= 0) {
                                break;
                            }
                            int rcode = in.get(3) & 0xf;
                            if (n >= 12 && (rcode == 0 || rcode == 3)) {
                                s.answered++;
                                if (s.load.legit() && !s.load.kind().equals("victim's names")) {
                                    long sent = s.sentAt.get(in.getShort(0) & 0xffff);
                                    otherLatency.recordValue(Math.max(0, System.nanoTime() - sent));
                                }
                            }
                        }
                    }
                    selector.selectedKeys().clear();
                }
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    }

    /**
     * The upstream: NXDOMAIN with an SOA under victim.example (but www and mail), dnsbl.example and
     * corp.example; an A record for every other name. Counts the victim's random names in ticks.
     */
    private static final class Upstream implements AutoCloseable {
        private final DatagramChannel channel;
        final AtomicLongArray victimRandom = new AtomicLongArray(RUN_TICKS);
        /** The most of the victim's random names waiting here in each tick (a slow zone's). */
        final AtomicLongArray victimWaiting = new AtomicLongArray(RUN_TICKS);
        private final java.util.concurrent.atomic.AtomicLong waiting = new java.util.concurrent.atomic.AtomicLong();
        private volatile long t0 = Long.MAX_VALUE;
        private final Thread thread;
        private final boolean slow;
        private final java.util.concurrent.ScheduledExecutorService later =
                java.util.concurrent.Executors.newSingleThreadScheduledExecutor();

        Upstream(boolean slow) throws IOException {
            this.slow = slow;
            channel = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
            thread = new Thread(this::serve, "flood-score-upstream");
            thread.setDaemon(true);
            thread.start();
        }

        int port() throws IOException {
            return ((InetSocketAddress) channel.getLocalAddress()).getPort();
        }

        void start(long t0) {
            this.t0 = t0;
            if (slow) { // a tick with no arrival and no answer still has its queries waiting
                later.scheduleAtFixedRate(() -> noteWaiting(waiting.get()), 0, 10, TimeUnit.MILLISECONDS);
            }
        }

        private void serve() {
            ByteBuffer in = ByteBuffer.allocate(4096);
            ByteBuffer out = ByteBuffer.allocate(4096);
            try {
                while (true) {
                    in.clear();
                    var from = channel.receive(in);
                    in.flip();
                    if (in.remaining() < 17) {
                        continue;
                    }
                    int end = nameEnd(in);
                    if (end < 0 || end + 4 > in.limit()) {
                        continue;
                    }
                    String name = name(in, end).toLowerCase(Locale.ROOT);
                    boolean nx = nxdomain(name);
                    if (nx && name.endsWith(".victim.example")) {
                        long tick = (System.nanoTime() - t0) / TICK_NANOS;
                        if (tick >= 0 && tick < RUN_TICKS) {
                            victimRandom.incrementAndGet((int) tick);
                        }
                    }
                    answer(in, end + 4, nx, out);
                    if (slow && nx && name.endsWith(".victim.example")) {
                        ByteBuffer copy = ByteBuffer.allocate(out.remaining()).put(out).flip();
                        noteWaiting(waiting.incrementAndGet());
                        later.schedule(() -> {
                            try {
                                channel.send(copy, from);
                            } catch (IOException e) {
                                // closed
                            }
                            noteWaiting(waiting.decrementAndGet());
                        }, SLOW_NANOS, TimeUnit.NANOSECONDS);
                        continue;
                    }
                    channel.send(out, from);
                }
            } catch (IOException e) {
                // closed
            }
        }

        /** Keeps the most waiting in this tick. */
        private void noteWaiting(long now) {
            long tick = (System.nanoTime() - t0) / TICK_NANOS;
            if (tick >= 0 && tick < RUN_TICKS) {
                victimWaiting.accumulateAndGet((int) tick, now, Math::max);
            }
        }

        private static boolean nxdomain(String name) {
            if (name.endsWith(".victim.example")) {
                return !name.equals("www.victim.example") && !name.equals("mail.victim.example");
            }
            return name.endsWith(".dnsbl.example") || name.endsWith(".corp.example");
        }

        /** The answer to the query in {@code in}, whose question ends at {@code questionEnd}, into {@code out}, flipped. */
        private static void answer(ByteBuffer in, int questionEnd, boolean nx, ByteBuffer out) {
            out.clear();
            out.putShort(in.getShort(0));
            out.put((byte) (0x84 | (in.get(2) & 0x01))); // QR, AA, RD as asked
            out.put((byte) (nx ? 0x03 : 0x00));
            out.putShort((short) 1).putShort((short) (nx ? 0 : 1)).putShort((short) (nx ? 1 : 0)).putShort((short) 0);
            out.put(in.duplicate().position(12).limit(questionEnd));
            if (nx) {
                // the zone's SOA: the question's last two labels, minimum 60, so that the NXDOMAIN is cached 60 s
                int zone = lastTwoLabels(in);
                out.putShort((short) (0xc000 | zone)).putShort((short) 6).putShort((short) 1).putInt(60);
                out.putShort((short) 22);
                out.put((byte) 0).put((byte) 0); // MNAME and RNAME: the root, as short as can be
                out.putInt(1).putInt(3600).putInt(600).putInt(86400).putInt(60);
            } else {
                out.putShort((short) 0xc00c).putShort((short) 1).putShort((short) 1).putInt(60).putShort((short) 4);
                out.put(new byte[] {(byte) 192, 0, 2, 1});
            }
            out.flip();
        }

        @Override
        public void close() throws IOException {
            later.shutdownNow();
            channel.close();
        }
    }

    /** Where the question's name ends in {@code q} (after its root label), or -1. */
    private static int nameEnd(ByteBuffer q) {
        int p = 12;
        while (p < q.limit()) {
            int len = q.get(p) & 0xff;
            if (len == 0) {
                return p + 1;
            }
            if (len > 63) {
                return -1;
            }
            p += 1 + len;
        }
        return -1;
    }

    private static String name(ByteBuffer q, int end) {
        StringBuilder b = new StringBuilder();
        int p = 12;
        while (p < end - 1) {
            int len = q.get(p) & 0xff;
            if (b.length() > 0) {
                b.append('.');
            }
            for (int i = 1; i <= len; i++) {
                b.append((char) q.get(p + i));
            }
            p += 1 + len;
        }
        return b.toString();
    }

    /** The offset of the question name's last two labels. */
    private static int lastTwoLabels(ByteBuffer q) {
        List<Integer> starts = new ArrayList<>();
        int p = 12;
        while ((q.get(p) & 0xff) != 0) {
            starts.add(p);
            p += 1 + (q.get(p) & 0xff);
        }
        return starts.get(Math.max(0, starts.size() - 2));
    }

    private static byte[] query(int id, String name) {
        ByteBuffer b = ByteBuffer.allocate(12 + name.length() + 2 + 4);
        b.putShort((short) id).putShort((short) 0x0100).putShort((short) 1).putShort((short) 0).putInt(0);
        for (String label : name.split("\\.")) {
            b.put((byte) label.length()).put(label.getBytes(StandardCharsets.US_ASCII));
        }
        b.put((byte) 0).putShort((short) 1).putShort((short) 1);
        return b.array();
    }

    private static String label(SplittableRandom r, int length) {
        char[] c = new char[length];
        for (int i = 0; i < length; i++) {
            c[i] = (char) ('a' + r.nextInt(26));
        }
        return new String(c);
    }

    private static int positive(String option, String value) {
        try {
            int n = Integer.parseInt(value);
            if (n > 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // below
        }
        usage("flood-score: " + option + " takes a positive number, not " + value);
        return 0;
    }

    private static void usage(String message) {
        System.err.println(message);
        System.exit(2);
    }
}
