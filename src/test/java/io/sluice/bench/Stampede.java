package io.sluice.bench;

import java.io.File;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * The stampede of docs/benchmarks.md ("Coalescing"): many clients ask one uncached question in
 * one burst, in front of an upstream that answers it late; what reaches the upstream, what the
 * clients get back and how soon. Each server is a command run through {@code sh -c}, with
 * {@code {port}} and {@code {upstream}} replaced; it must serve UDP on 127.0.0.1:{port} and forward
 * to 127.0.0.1:{upstream}. The upstream is an {@link AnsweringUpstream}: it answers every name with
 * an A record, {@code ready.example.} at once and every other after {@code --delay-ms}, and counts
 * the queries it gets for each name.
 *
 * <pre>java -cp ... io.sluice.bench.Stampede [--clients 200] [--delay-ms 1000] [--rounds 5] LABEL=COMMAND...</pre>
 *
 * Prints per server and round the upstream queries, the answers (NOERROR with the record) and
 * their p50 and p99 from the burst's first send, then the medians over the rounds.
 */
public final class Stampede {
    private static final int PORT = 5391;

    private Stampede() {
    }

    public static void main(String[] args) throws Exception {
        int clients = 200;
        long delayMillis = 1000;
        int rounds = 5;
        List<String[]> servers = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--clients" -> clients = Integer.parseInt(args[++i]);
                case "--delay-ms" -> delayMillis = Long.parseLong(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                default -> {
                    int eq = args[i].indexOf('=');
                    if (eq <= 0) {
                        System.err.println("stampede: LABEL=COMMAND expected, not " + args[i]);
                        System.exit(2);
                    }
                    servers.add(new String[] {args[i].substring(0, eq), args[i].substring(eq + 1)});
                }
            }
        }
        try (AnsweringUpstream upstream = new AnsweringUpstream(delayMillis)) {
            System.out.printf("stampede: %d clients, one question a round, the upstream answering it after %d ms%n",
                    clients, delayMillis);
            for (String[] server : servers) {
                run(server[0], server[1].replace("{port}", String.valueOf(PORT))
                        .replace("{upstream}", String.valueOf(upstream.port())), upstream, clients, rounds);
            }
        }
    }

    private static void run(String label, String command, AnsweringUpstream upstream, int clients, int rounds)
            throws Exception {
        Process p = new ProcessBuilder("sh", "-c", command).redirectErrorStream(true)
                .redirectOutput(new File("/tmp/stampede-" + label + ".log")).start();
        try {
            waitReady(p, label);
            List<long[]> results = new ArrayList<>();
            for (int r = 0; r < rounds; r++) {
                String name = "r" + r + "-" + System.nanoTime() + ".stampede.example.";
                long[] res = burst(name, clients);
                long asked = upstream.queries(name);
                System.out.printf("%s round=%d upstream_queries=%d answers=%d p50_ms=%.1f p99_ms=%.1f%n",
                        label, r + 1, asked, res[0], res[1] / 1e6, res[2] / 1e6);
                results.add(new long[] {asked, res[0], res[1], res[2]});
            }
            System.out.printf("%s median: upstream_queries=%d answers=%d p50_ms=%.1f p99_ms=%.1f%n", label,
                    median(results, 0), median(results, 1), median(results, 2) / 1e6, median(results, 3) / 1e6);
        } finally {
            p.destroy();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
    }

    private static long median(List<long[]> rows, int column) {
        long[] v = rows.stream().mapToLong(r -> r[column]).sorted().toArray();
        return v[v.length / 2];
    }

    private static void waitReady(Process p, String label) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        try (DatagramSocket s = new DatagramSocket()) {
            s.setSoTimeout(200);
            byte[] q = query(1, "ready.example.");
            while (System.nanoTime() < deadline) {
                if (!p.isAlive()) {
                    throw new IllegalStateException(label + " exited: see /tmp/stampede-" + label + ".log");
                }
                s.send(new DatagramPacket(q, q.length, new InetSocketAddress("127.0.0.1", PORT)));
                try {
                    s.receive(new DatagramPacket(new byte[512], 512));
                    return;
                } catch (SocketTimeoutException e) {
                    // not up yet
                }
            }
        }
        throw new IllegalStateException(label + " never answered");
    }

    /** One burst: {@code clients} sockets each send the question; [answers, p50 nanos, p99 nanos]. */
    private static long[] burst(String name, int clients) throws Exception {
        List<DatagramSocket> sockets = new ArrayList<>();
        try {
            for (int i = 0; i < clients; i++) {
                DatagramSocket s = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0));
                s.setSoTimeout(5000);
                sockets.add(s);
            }
            InetSocketAddress to = new InetSocketAddress("127.0.0.1", PORT);
            long start = System.nanoTime();
            for (int i = 0; i < clients; i++) {
                byte[] q = query(i + 1, name);
                sockets.get(i).send(new DatagramPacket(q, q.length, to));
            }
            List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
            AtomicInteger answers = new AtomicInteger();
            var pool = Executors.newFixedThreadPool(Math.min(clients, 64));
            try {
                List<java.util.concurrent.Future<?>> done = new ArrayList<>();
                for (int i = 0; i < clients; i++) {
                    int id = i + 1;
                    DatagramSocket s = sockets.get(i);
                    done.add(pool.submit(() -> {
                        byte[] buf = new byte[4096];
                        DatagramPacket d = new DatagramPacket(buf, buf.length);
                        try {
                            s.receive(d);
                            long at = System.nanoTime();
                            Message m = new Message(Arrays.copyOf(buf, d.getLength()));
                            if (m.getHeader().getID() == id && m.getRcode() == Rcode.NOERROR
                                    && m.getSection(Section.ANSWER).size() == 1) {
                                answers.incrementAndGet();
                                latencies.add(at - start);
                            }
                        } catch (IOException e) {
                            // no answer within 5 s: counted as none
                        }
                    }));
                }
                for (var f : done) {
                    f.get();
                }
            } finally {
                pool.shutdownNow();
            }
            List<Long> sorted = new ArrayList<>(latencies);
            Collections.sort(sorted);
            long p50 = sorted.isEmpty() ? 0 : sorted.get((sorted.size() - 1) / 2);
            long p99 = sorted.isEmpty() ? 0 : sorted.get((int) Math.ceil(sorted.size() * 0.99) - 1);
            return new long[] {answers.get(), p50, p99};
        } finally {
            sockets.forEach(DatagramSocket::close);
        }
    }

    private static byte[] query(int id, String name) throws IOException {
        Message m = Message.newQuery(Record.newRecord(Name.fromString(name), Type.A, DClass.IN));
        m.getHeader().setID(id);
        return m.toWire();
    }
}
