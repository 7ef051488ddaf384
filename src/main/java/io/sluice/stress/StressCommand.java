package io.sluice.stress;

import com.google.common.net.HostAndPort;
import io.sluice.posix.Signals;
import io.sluice.config.ConfigException;
import io.sluice.config.Durations;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code dnsstress}: a DNS load generator that takes dnsstresss' command line unchanged and adds
 * a duration, an open-loop rate, random subdomains, query files, TCP and a JSON summary.
 *
 * <p>Exit codes: 0 when the run finished, 1 when the target never answered, 2 for bad arguments.
 */
@Command(name = "stress", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
        description = "Stress a DNS server (dnsstresss-compatible). Prints one line per interval,"
                + " and a summary at the end (--duration) or on Ctrl-C.")
public final class StressCommand implements Callable<Integer> {
    static final int EXIT_OK = 0;
    static final int EXIT_NO_ANSWER = 1;
    static final int EXIT_USAGE = 2;

    @Option(names = "-r", paramLabel = "HOST:PORT", description = "Resolver to test. Default 127.0.0.1:53.")
    String resolver = "127.0.0.1:53";

    @Option(names = "-concurrency", paramLabel = "N", description = "Queries in flight at once. Default 50.")
    int concurrency = 50;

    @Option(names = "-d", paramLabel = "MS", description = "Display interval in milliseconds. Default 1000.")
    int displayMillis = 1000;

    @Option(names = "-random", description = "Random message IDs (otherwise sequential).")
    boolean randomIds;

    @Option(names = "-i", description = "Iterative queries (RD=0), to stress an authoritative server.")
    boolean iterative;

    @Option(names = "-f", description = "Flood: send without waiting for answers.")
    boolean flood;

    @Option(names = "-v", description = "Print every answer.")
    boolean verbose;

    @Option(names = "--duration", paramLabel = "DURATION", description = "Stop after this long (10s, 1m) and print a summary.")
    String duration;

    @Option(names = "--rate", paramLabel = "QPS",
            description = "Open loop at this many queries per second; latency counts from when each query was due.")
    long rate;

    @Option(names = "--random-subdomains", description = "A fresh random label in front of every name.")
    boolean randomSubdomains;

    @Option(names = "--queries", paramLabel = "FILE", description = "Queries from a file, dnsperf's 'name type' format.")
    Path queryFile;

    @Option(names = "--tcp", description = "Over TCP (several connections, many queries in flight on each).")
    boolean tcp;

    @Option(names = "--tls", description = "Over TLS (DNS over TLS, port 853 unless -r says): as --tcp, each connection"
            + " in TLS; the server's certificate is not checked.")
    boolean tls;

    @Option(names = "--https", description = "Over HTTPS (DNS over HTTPS, port 443 unless -r says): a POST to"
            + " /dns-query per query, each on a stream of its own, many in flight on each HTTP/2 connection.")
    boolean https;

    @Option(names = "--json", description = "Print the summary as one JSON object on stdout (interval lines go to stderr).")
    boolean json;

    @Option(names = "--warmup", paramLabel = "DURATION",
            description = "Run this long first and forget it: nothing before counts in lines or summary.")
    String warmup;

    @Option(names = "--timeout", paramLabel = "DURATION", description = "An unanswered query counts as lost after this. Default 2s.")
    String timeout = "2s";

    @Option(names = "--sockets", paramLabel = "N",
            description = "UDP sockets or TCP connections per thread. Default: its share of concurrency, at most 8.")
    Integer sockets;

    @Option(names = "--threads", paramLabel = "N",
            description = "Sending threads, each with its share of concurrency and rate. Default 1.")
    int threads = 1;

    @Parameters(paramLabel = "DOMAIN", arity = "0..*", description = "Names to query, in turn.")
    List<String> targets = List.of();

    private final PrintStream out;
    private final PrintStream err;
    private final CountDownLatch interrupted = new CountDownLatch(1);

    public StressCommand() {
        this(System.out, System.err);
    }

    StressCommand(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    @Override
    public Integer call() throws Exception {
        List<LoadGenerator> generators = new ArrayList<>();
        long warmupNanos;
        PrintStream lines = json ? err : out;
        Long runNanos;
        try {
            runNanos = duration == null ? null : nanos(duration, "--duration");
            warmupNanos = warmup == null ? 0 : nanos(warmup, "--warmup");
            long timeoutNanos = nanos(timeout, "--timeout");
            if (concurrency < 1 || displayMillis < 1 || rate < 0 || (sockets != null && sockets < 1) || threads < 1
                    || threads > concurrency) {
                throw new IllegalArgumentException("-concurrency, -d, --sockets and --threads must be positive,"
                        + " --threads at most -concurrency, --rate not negative");
            }
            if (targets.isEmpty() && queryFile == null) {
                throw new IllegalArgumentException("give at least one domain to query, or --queries FILE");
            }
            if ((tcp ? 1 : 0) + (tls ? 1 : 0) + (https ? 1 : 0) > 1) {
                throw new IllegalArgumentException("--tcp, --tls and --https: one at most");
            }
            InetSocketAddress to = target(resolver, https ? 443 : tls ? 853 : 53);
            for (int t = 0; t < threads; t++) {
                int share = concurrency / threads + (t < concurrency % threads ? 1 : 0);
                long rateShare = rate / threads + (t < rate % threads ? 1 : 0);
                int links = sockets != null ? sockets : Math.min(8, share);
                QueryMaker queries = queryFile != null ? QueryMaker.ofFile(queryFile, randomSubdomains, !iterative)
                        : QueryMaker.ofTargets(targets, randomSubdomains, !iterative);
                var options = new LoadGenerator.Options(to, share, flood, rateShare, randomIds, tcp, tls, https, timeoutNanos,
                        links, verbose);
                generators.add(new LoadGenerator(options, queries, lines));
            }
        } catch (IllegalArgumentException | IOException e) {
            err.println("dnsstress: " + e.getMessage());
            return EXIT_USAGE;
        }
        try {
            for (LoadGenerator g : generators) {
                g.start();
            }
        } catch (Exception e) {
            err.println("dnsstress: cannot reach " + resolver + ": " + e.getMessage());
            return EXIT_NO_ANSWER;
        }
        Signals.on("INT", s -> interrupted.countDown());
        Signals.on("TERM", s -> interrupted.countDown());
        boolean stoppedEarly = warmupNanos > 0 && interrupted.await(warmupNanos, TimeUnit.NANOSECONDS);
        if (!stoppedEarly) {
            for (LoadGenerator g : generators) {
                g.forgetSoFar();
            }
        }
        long started = System.nanoTime(); // timed from the first counted query, not from JVM start-up
        long end = runNanos == null ? Long.MAX_VALUE : started + runNanos;
        long lastLine = started;
        while (true) {
            long nextLine = lastLine + displayMillis * 1_000_000L;
            long wait = Math.min(end, nextLine) - System.nanoTime();
            if (wait > 0 && interrupted.await(wait, TimeUnit.NANOSECONDS)) {
                break;
            }
            long now = System.nanoTime();
            if (now >= nextLine) {
                RunStats.Interval sum = RunStats.Interval.EMPTY;
                for (LoadGenerator g : generators) {
                    sum = sum.plus(g.takeInterval().get());
                }
                lines.println(sum.line((now - lastLine) / 1e9));
                lines.flush();
                lastLine = now;
            }
            if (now >= end) {
                break;
            }
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        RunStats total = new RunStats();
        for (LoadGenerator g : generators) {
            g.stop();
            total.add(g.stats);
        }
        summarize(total, seconds);
        return total.received == 0 ? EXIT_NO_ANSWER : EXIT_OK;
    }

    private void summarize(RunStats s, double seconds) {
        long lost = s.sent - s.received;
        double qps = s.received / seconds;
        Map<String, Double> lat = s.latencyMs();
        if (json) {
            StringBuilder j = new StringBuilder("{");
            j.append(String.format(Locale.ROOT, "\"target\":\"%s\",\"duration_s\":%.3f,\"sent\":%d,\"received\":%d,"
                    + "\"lost\":%d,\"timeouts\":%d,\"late\":%d,\"qps\":%.1f,\"rcodes\":{", resolver, seconds, s.sent,
                    s.received, lost, s.timeouts, s.late, qps));
            String sep = "";
            for (var e : s.rcodeCounts().entrySet()) {
                j.append(sep).append('"').append(e.getKey()).append("\":").append(e.getValue());
                sep = ",";
            }
            j.append("},\"latency_ms\":{");
            sep = "";
            for (var e : lat.entrySet()) {
                j.append(sep).append(String.format(Locale.ROOT, "\"%s\":%.3f", e.getKey(), e.getValue()));
                sep = ",";
            }
            out.println(j.append("}}"));
        } else {
            out.printf(Locale.ROOT, "--- %s: %.1f s, sent %d, received %d, lost %d (%.2f%%), %.0f answers/s%n",
                    resolver, seconds, s.sent, s.received, lost, s.sent == 0 ? 0 : 100.0 * lost / s.sent, qps);
            StringBuilder r = new StringBuilder("rcodes:");
            s.rcodeCounts().forEach((k, v) -> r.append(' ').append(k).append('=').append(v));
            out.println(r.append(" timeouts=").append(s.timeouts).append(" late=").append(s.late));
            out.printf(Locale.ROOT, "latency ms: min %.3f  p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f%n",
                    lat.get("min"), lat.get("p50"), lat.get("p90"), lat.get("p99"), lat.get("p99.9"), lat.get("max"));
        }
        out.flush();
    }

    private static InetSocketAddress target(String text, int defaultPort) {
        HostAndPort hp = HostAndPort.fromString(text).withDefaultPort(defaultPort);
        try {
            return new InetSocketAddress(InetAddress.getByName(hp.getHost()), hp.getPort());
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("-r: cannot resolve '" + hp.getHost() + "'");
        }
    }

    private static long nanos(String text, String flag) {
        long v;
        try {
            v = Durations.parse(text).toNanos();
        } catch (ConfigException e) {
            throw new IllegalArgumentException(flag + ": " + e.getMessage());
        }
        if (v == 0) {
            throw new IllegalArgumentException(flag + ": must be longer than 0");
        }
        return v;
    }
}
