package io.sluice;

import com.google.common.util.concurrent.Uninterruptibles;
import io.netty.util.ResourceLeakDetector;
import io.sluice.config.ConfigException;
import io.sluice.config.ConfigFile;
import io.sluice.config.Settings;
import io.sluice.stress.AnswerCommand;
import io.sluice.stress.StressCommand;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.net.BindException;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The command line: reads settings (file, then flags), starts {@link Sluice}, waits for SIGTERM or
 * SIGINT, drains and exits.
 *
 * <p>Exit codes: 0 after a clean stop, {@code --help} or {@code --version}; 1 when it could not
 * start (a listen address taken); 2 for a bad flag, value or configuration file.
 */
@Command(name = "sluice", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        sortOptions = false, usageHelpAutoWidth = true,
        description = "A DNS forwarder that limits queries per registrable domain.",
        footer = "%nSubcommands: stress (a DNS load generator; 'stress --help', or scripts/dnsstress),"
                + " answer (a server answering every query, the upstream of scripts/bench without nsd).")
public final class Main implements Callable<Integer> {
    static final int EXIT_OK = 0;
    static final int EXIT_START_FAILED = 1;
    static final int EXIT_USAGE = 2;

    private static final Logger log = LoggerFactory.getLogger(Main.class);

    @Option(names = "--config", paramLabel = "FILE",
            description = "YAML file with the same settings; flags override it.")
    Path config;

    @Option(names = "--listen", paramLabel = "HOST:PORT",
            description = "Serve UDP and TCP here; repeatable. Default 127.0.0.1:1053.")
    List<String> listen;

    @Option(names = "--upstream", paramLabel = "HOST:PORT",
            description = "Upstream resolver, tried in order; repeatable. Default: /etc/resolv.conf.")
    List<String> upstreams;

    @Option(names = "--threads", paramLabel = "N", description = "Event-loop threads. Default: cores.")
    String threads;

    @Option(names = "--udp-steering", paramLabel = "MODE",
            description = "Which thread's UDP socket reads a datagram: cpu (the receiving CPU's), hash (the kernel's"
                    + " hash of addresses and ports) or auto (cpu on loopback addresses, hash elsewhere). Default auto.")
    String udpSteering;

    @Option(names = "--timeout", paramLabel = "DURATION",
            description = "Wait for one upstream before the next, then SERVFAIL. Default 2s.")
    String timeout;

    @Option(names = "--query-timeout", paramLabel = "DURATION",
            description = "The most a query may take over all upstreams before SERVFAIL. Default 4s.")
    String queryTimeout;

    @Option(names = "--limit", paramLabel = "N",
            description = "Queries per window per registrable domain; 0 = no limit. Default 0.")
    String limit;

    @Option(names = "--window", paramLabel = "DURATION", description = "Length of a limit window. Default 1s.")
    String window;

    @Option(names = "--algorithm", paramLabel = "NAME",
            description = "fixed-window | sliding-window | token-bucket. Default fixed-window.")
    String algorithm;

    @Option(names = "--burst", paramLabel = "N", description = "Token-bucket capacity. Default: the limit.")
    String burst;

    @Option(names = "--action", paramLabel = "NAME",
            description = "refused | nxdomain | drop | truncate. Default refused.")
    String action;

    @Option(names = "--dry-run", description = "Count, log and expose what would be refused, but forward everything.")
    boolean dryRun;

    @Option(names = "--max-domains", paramLabel = "N", description = "Counter table bound. Default 1000000.")
    String maxDomains;

    @Option(names = "--public-suffix-list", paramLabel = "FILE",
            description = "A public_suffix_list.dat to use instead of the one in Guava.")
    String publicSuffixList;

    @Option(names = "--metrics", paramLabel = "HOST:PORT",
            description = "Serve counters at http://HOST:PORT/metrics (Prometheus text). Default: off.")
    String metrics;

    @Option(names = "--backend", paramLabel = "NAME",
            description = "Where counters live: memory | redis | chronicle. Default memory.")
    String backend;

    @Option(names = "--redis", paramLabel = "URI",
            description = "redis://host:port[/db] or rediss:// (TLS). Default redis://127.0.0.1:6379.")
    String redis;

    @Option(names = "--redis-cluster", paramLabel = "h:p,...",
            description = "Seed nodes of a Redis Cluster, instead of --redis.")
    String redisCluster;

    @Option(names = "--redis-mode", paramLabel = "NAME",
            description = "exact (each decision asks Redis) | async (local, synced). Default exact.")
    String redisMode;

    @Option(names = "--redis-timeout", paramLabel = "DURATION",
            description = "Longest wait on Redis before --redis-failure decides. Default 50ms.")
    String redisTimeout;

    @Option(names = "--redis-failure", paramLabel = "NAME",
            description = "While Redis is slow or away: local | open | closed. Default local.")
    String redisFailure;

    @Option(names = "--sync-interval", paramLabel = "DURATION",
            description = "Async mode: how often counts are synced with Redis. Default 50ms.")
    String syncInterval;

    @Option(names = "--state-file", paramLabel = "PATH",
            description = "The Chronicle Map file of --backend chronicle. Default ./sluice-counters.dat.")
    String stateFile;

    @Option(names = "--reset-corrupt-state-file",
            description = "If the state file cannot be read, move it aside and start a fresh one (else exit 2).")
    boolean resetCorruptStateFile;

    private final CountDownLatch stop = new CountDownLatch(1);

    public static void main(String[] args) {
        // Netty's default leak detection records a stack trace for about one buffer in a hundred:
        // 1.9% of a loop's CPU at 20,000 qps (async-profiler). Off, unless the operator sets it.
        if (System.getProperty("io.netty.leakDetection.level") == null) {
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        }
        System.exit(run(args));
    }

    /** Runs the command line and returns the exit code instead of exiting. */
    static int run(String... args) {
        CommandLine cli = new CommandLine(new Main());
        cli.addSubcommand("stress", new StressCommand());
        cli.addSubcommand("answer", new AnswerCommand());
        cli.setParameterExceptionHandler((e, a) -> {
            PrintWriter err = e.getCommandLine().getErr();
            String who = e.getCommandLine().getCommandName().equals("stress") ? "dnsstress" : "sluice";
            err.println(who + ": " + e.getMessage() + " (see --help)");
            err.flush();
            return EXIT_USAGE;
        });
        return cli.execute(args);
    }

    @Override
    public Integer call() {
        Settings settings;
        try {
            settings = settings();
        } catch (ConfigException e) {
            System.err.println("sluice: " + e.getMessage());
            return EXIT_USAGE;
        }
        Sluice sluice;
        try {
            sluice = Sluice.start(settings);
        } catch (ConfigException e) {
            System.err.println("sluice: " + e.getMessage());
            return EXIT_USAGE;
        } catch (BindException e) {
            System.err.println("sluice: cannot listen on " + e.getMessage());
            return EXIT_START_FAILED;
        } catch (InterruptedException e) {
            return EXIT_START_FAILED;
        } catch (RuntimeException e) {
            // e.g. an upstream whose address family this host cannot reach: one line, not a trace
            System.err.println("sluice: cannot start: " + e.getMessage());
            return EXIT_START_FAILED;
        }
        Signals.on("TERM", s -> stop.countDown());
        Signals.on("INT", s -> stop.countDown());
        // Operators send these out of habit (reload, reopen logs); the JVM's default for HUP is to
        // exit, which would drop every query in flight. Nothing here reloads yet: say so.
        for (String name : new String[] {"HUP", "USR1"}) {
            try {
                Signals.on(name, s -> log.warn("SIG{} ignored: sluice does not reload its configuration;"
                        + " restart it to apply changes", s));
            } catch (IllegalArgumentException e) {
                log.warn("cannot handle SIG{} ({}): it acts as the JVM decides", name, e.getMessage()); // -Xrs
            }
        }
        log.info("sluice {} {}", Version.get(), sluice.describe());
        Uninterruptibles.awaitUninterruptibly(stop);
        log.info("stopping: draining queries in flight");
        sluice.close();
        log.info("stopped; {}", sluice.meters());
        return EXIT_OK;
    }

    private Settings settings() throws ConfigException {
        Settings.Builder b = new Settings.Builder();
        if (config != null) {
            ConfigFile.apply(config, b);
        }
        flag(b, "--listen", "listen", listen);
        flag(b, "--upstream", "upstreams", upstreams);
        flag(b, "--threads", "threads", threads);
        flag(b, "--timeout", "timeout", timeout);
        flag(b, "--query-timeout", "query-timeout", queryTimeout);
        flag(b, "--udp-steering", "udp-steering", udpSteering);
        flag(b, "--limit", "limits.default.queries", limit);
        flag(b, "--window", "limits.default.window", window);
        flag(b, "--algorithm", "limits.algorithm", algorithm);
        flag(b, "--burst", "limits.burst", burst);
        flag(b, "--action", "action", action);
        flag(b, "--dry-run", "dry-run", dryRun ? "true" : null);
        flag(b, "--max-domains", "limits.max-domains", maxDomains);
        flag(b, "--public-suffix-list", "public-suffix-list", publicSuffixList);
        flag(b, "--metrics", "metrics", metrics);
        flag(b, "--backend", "backend", backend);
        flag(b, "--redis", "redis", redis);
        flag(b, "--redis-cluster", "redis-cluster", redisCluster);
        flag(b, "--redis-mode", "redis-mode", redisMode);
        flag(b, "--redis-timeout", "redis-timeout", redisTimeout);
        flag(b, "--redis-failure", "redis-failure", redisFailure);
        flag(b, "--sync-interval", "sync-interval", syncInterval);
        flag(b, "--state-file", "state-file", stateFile);
        flag(b, "--reset-corrupt-state-file", "reset-corrupt-state-file", resetCorruptStateFile ? "true" : null);
        return b.build();
    }

    private static void flag(Settings.Builder b, String flag, String key, Object value) throws ConfigException {
        if (value == null) {
            return;
        }
        @SuppressWarnings("unchecked")
        List<String> values = value instanceof List<?> ? (List<String>) value : List.of((String) value);
        try {
            b.set(key, values, flag);
        } catch (ConfigException e) {
            throw new ConfigException(flag + ": " + e.getMessage());
        }
    }

    /** The version from the build, for {@code --version} and the startup line. */
    static final class Version implements CommandLine.IVersionProvider {
        static String get() {
            Properties p = new Properties();
            try (InputStream in = Main.class.getResourceAsStream("/sluice-version.properties")) {
                if (in != null) {
                    p.load(in);
                }
            } catch (IOException e) {
                // fall through to "unknown"
            }
            return p.getProperty("version", "unknown");
        }

        @Override
        public String[] getVersion() {
            return new String[] {"sluice " + get()};
        }
    }
}
