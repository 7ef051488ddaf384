package io.sluice.config;

import io.sluice.transport.Addresses;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.xbill.DNS.ResolverConfig;
import org.xbill.DNS.Type;

/**
 * Everything sluice runs with, validated. Built by {@link Builder} from the YAML file, then flags.
 * The keys, defaults and meanings are documented in {@code conf/sluice.yml}.
 *
 * @param listen              addresses served over UDP and TCP
 * @param upstreams           resolvers, tried in order
 * @param threads             event-loop threads
 * @param timeout             wait for one upstream before trying the next
 * @param queryTimeout        the most a query may take over all its upstreams before SERVFAIL
 * @param maxInflight         queries waiting on upstreams at once, over all threads
 * @param maxTcpConnections   client TCP connections at once
 * @param tcpIdleTimeout      a client TCP connection with no query for this long is closed
 * @param upstreamSockets     UDP sockets (source ports) per thread for upstream queries
 * @param udpSteering         how a listen address's datagrams are shared between the threads' sockets
 * @param maxFails            consecutive timeouts after which an upstream is marked down
 * @param healthCheckInterval how often a down upstream is probed
 * @param healthCheck         what a probe asks, and what counts as alive
 * @param limits              the per-domain limits
 * @param backend             where the limits' counters live
 * @param metrics             where to serve /metrics, or null for nowhere
 */
public record Settings(
        List<InetSocketAddress> listen,
        List<InetSocketAddress> upstreams,
        int threads,
        Duration timeout,
        Duration queryTimeout,
        int maxInflight,
        int maxTcpConnections,
        Duration tcpIdleTimeout,
        int upstreamSockets,
        UdpSteering udpSteering,
        int maxFails,
        Duration healthCheckInterval,
        HealthCheck healthCheck,
        LimitSettings limits,
        BackendSettings backend,
        InetSocketAddress metrics) {

    /**
     * The listen port when none is given: unprivileged, and clear of mDNS (5353, which avahi holds
     * on many hosts), LLMNR (5355) and the benchmark's upstream (5300).
     */
    public static final int DEFAULT_PORT = 1053;
    public static final int UPSTREAM_DEFAULT_PORT = 53;
    /** Largest limit: counters are 31-bit. */
    public static final long MAX_QUERIES = Integer.MAX_VALUE;

    public Settings {
        listen = List.copyOf(listen);
        upstreams = List.copyOf(upstreams);
    }

    /**
     * The probe sent to a down upstream.
     *
     * @param name        the query name, absolute ({@code "."}, {@code "example.com."})
     * @param type        the query type's number
     * @param mustResolve only a NOERROR answer counts as alive; otherwise any answer with the
     *                    probe's ID does, as an answer of any kind shows the upstream is there
     */
    public record HealthCheck(String name, int type, boolean mustResolve) {
        @Override
        public String toString() {
            return name + " " + Type.string(type) + (mustResolve ? " (must resolve)" : "");
        }
    }

    /**
     * Which of a listen address's UDP sockets (one per thread) reads a datagram: the one of the
     * CPU that received it, or the kernel's hash of addresses and ports; {@code auto} is by CPU on
     * loopback addresses and by hash elsewhere. Each prints as its configuration name.
     */
    public enum UdpSteering {
        AUTO, CPU, HASH;

        /** Whether datagrams to {@code address} are steered by CPU. */
        public boolean byCpu(InetSocketAddress address) {
            return this == CPU || this == AUTO && address.getAddress().isLoopbackAddress();
        }

        @Override
        public String toString() {
            return Values.configName(this);
        }
    }

    /** Collects settings by key, each value checked as it arrives; the last value for a key wins. */
    public static final class Builder {
        /** Every key {@link #set} takes, for telling a misspelt key from a bad value. */
        public static final Set<String> KEYS = Set.of("listen", "upstreams", "threads", "timeout", "query-timeout",
                "max-inflight", "max-tcp-connections", "tcp-idle-timeout", "upstream-sockets", "udp-steering",
                "max-fails", "health-check-interval", "health-check-name", "health-check-type",
                "health-check-must-resolve", "limits.default", "limits.default.queries", "limits.default.window",
                "limits.algorithm", "limits.burst", "limits.max-domains", "limits.janitor-interval",
                "limits.exempt-clients", "action", "dry-run", "public-suffix-list", "metrics", "backend", "redis",
                "redis-cluster", "redis-mode", "redis-timeout", "redis-failure", "sync-interval", "state-file",
                "reset-corrupt-state-file");
        static final String UNKNOWN_KEY = "unknown key";

        private List<InetSocketAddress> listen = List.of();
        private List<InetSocketAddress> upstreams = List.of();
        private int threads = Runtime.getRuntime().availableProcessors();
        private Duration timeout = Duration.ofSeconds(2);
        private Duration queryTimeout = Duration.ofSeconds(4);
        private int maxInflight = 65_536;
        private int maxTcpConnections = 1_000;
        private Duration tcpIdleTimeout = Duration.ofSeconds(10);
        private int upstreamSockets = 8;
        private UdpSteering udpSteering = UdpSteering.AUTO;
        private int maxFails = 3;
        private Duration healthCheckInterval = Duration.ofSeconds(1);
        private String healthCheckName = ".";
        private int healthCheckType = Type.NS;
        private boolean healthCheckMustResolve = false;

        private long limit = 0;
        private Duration window = Duration.ofSeconds(1);
        private LimitSettings.Algorithm algorithm = LimitSettings.Algorithm.FIXED_WINDOW;
        private long burst = 0;
        private LimitSettings.Action action = LimitSettings.Action.REFUSED;
        private boolean dryRun = false;
        private int maxDomains = 1_000_000;
        private Duration janitorInterval = Duration.ofSeconds(5);
        private Path publicSuffixList;
        private final Map<String, LimitSettings.DomainLimit> domains = new LinkedHashMap<>();
        private List<Network> exemptClients = List.of();
        private InetSocketAddress metrics;
        private BackendSettings.Kind backend = BackendSettings.Kind.MEMORY;
        private URI redis = BackendSettings.DEFAULT_REDIS;
        private List<String> redisCluster = List.of();
        private BackendSettings.RedisMode redisMode = BackendSettings.RedisMode.EXACT;
        private Duration redisTimeout = Duration.ofMillis(50);
        private BackendSettings.RedisFailure redisFailure = BackendSettings.RedisFailure.LOCAL;
        private Duration syncInterval = Duration.ofMillis(50);
        private Path stateFile = Path.of("sluice-counters.dat");
        private boolean resetCorruptStateFile = false;
        /** Where each key and each domain override was last set (file and line, or flag), for errors found later. */
        private final Map<String, String> origins = new LinkedHashMap<>();
        private final Map<String, String> domainOrigins = new LinkedHashMap<>();

        /** {@link #set(String, List)}, remembering {@code where} (a file line, a flag) for errors found at build. */
        public Builder set(String key, List<String> values, String where) throws ConfigException {
            set(key, values);
            origins.put(key, where);
            return this;
        }

        /**
         * Sets one key. A scalar key takes exactly one value; {@code listen} and {@code upstreams}
         * take one or more.
         *
         * @throws ConfigException naming the problem with the value (not the key: the caller knows
         *                         whether it came from a flag or a file line)
         */
        public Builder set(String key, List<String> values) throws ConfigException {
            switch (key) {
                case "listen" -> listen = addresses(values, DEFAULT_PORT, true);
                case "upstreams" -> upstreams = addresses(values, UPSTREAM_DEFAULT_PORT, false);
                case "threads" -> threads = Values.integer(one(values), 1, 1024);
                case "timeout" -> timeout = positive(Values.duration(one(values)));
                case "query-timeout" -> queryTimeout = positive(Values.duration(one(values)));
                case "max-inflight" -> maxInflight = Values.integer(one(values), 1, 1_000_000);
                case "max-tcp-connections" -> maxTcpConnections = Values.integer(one(values), 1, 1_000_000);
                case "tcp-idle-timeout" -> tcpIdleTimeout = positive(Values.duration(one(values)));
                case "upstream-sockets" -> upstreamSockets = Values.integer(one(values), 1, 256);
                case "udp-steering" -> udpSteering = Values.named(one(values), UdpSteering.values());
                case "max-fails" -> maxFails = Values.integer(one(values), 1, 1_000_000);
                case "health-check-interval" -> healthCheckInterval = positive(Values.duration(one(values)));
                case "health-check-name" -> healthCheckName = Values.absoluteName(one(values));
                case "health-check-type" -> healthCheckType = Values.queryType(one(values));
                case "health-check-must-resolve" -> healthCheckMustResolve = Values.bool(one(values));
                case "limits.default" -> limit = unlimited(one(values));
                case "limits.default.queries" -> limit = Values.count(one(values), 0, MAX_QUERIES);
                case "limits.default.window" -> window = positive(Values.duration(one(values)));
                case "limits.algorithm" -> algorithm = Values.named(one(values), LimitSettings.Algorithm.values());
                case "limits.burst" -> burst = Values.count(one(values), 0, MAX_QUERIES);
                case "limits.max-domains" -> maxDomains = Values.integer(one(values), 1, 100_000_000);
                case "limits.janitor-interval" -> janitorInterval = positive(Values.duration(one(values)));
                case "limits.exempt-clients" -> exemptClients = networks(values);
                case "action" -> action = Values.named(one(values), LimitSettings.Action.values());
                case "dry-run" -> dryRun = Values.bool(one(values));
                case "public-suffix-list" -> publicSuffixList = readable(one(values));
                case "metrics" -> metrics = Values.address(one(values), 9153, true);
                case "backend" -> backend = Values.named(one(values), BackendSettings.Kind.values());
                case "redis" -> redis = redisUri(one(values));
                case "redis-cluster" -> redisCluster = seeds(values);
                case "redis-mode" -> redisMode = Values.named(one(values), BackendSettings.RedisMode.values());
                case "redis-timeout" -> redisTimeout = positive(Values.duration(one(values)));
                case "redis-failure" -> redisFailure = Values.named(one(values), BackendSettings.RedisFailure.values());
                case "sync-interval" -> syncInterval = positive(Values.duration(one(values)));
                case "state-file" -> stateFile = Path.of(one(values).trim());
                case "reset-corrupt-state-file" -> resetCorruptStateFile = Values.bool(one(values));
                default -> throw new ConfigException(UNKNOWN_KEY);
            }
            return this;
        }

        /**
         * Sets the limit of one registrable domain: {@code queries} per {@code window}, or
         * unlimited when {@code queries} is "unlimited" (then {@code window} is null).
         */
        public Builder domain(String name, String queries, String window) throws ConfigException {
            return domain(name, queries, window, "limits.domains." + name);
        }

        /**
         * {@link #domain(String, String, String)}, remembering {@code where} it was written. A
         * Unicode name is converted with IDNA ({@code bücher.de} is {@code xn--bcher-kva.de}, as
         * queries carry it).
         */
        public Builder domain(String name, String queries, String window, String where) throws ConfigException {
            String ascii = Values.asciiDomain(name);
            if (domainOrigins.containsKey(ascii)) {
                throw new ConfigException("the same domain as " + domainOrigins.get(ascii) + " (names are compared"
                        + " in lower case and IDNA A-labels)");
            }
            LimitSettings.DomainLimit limit;
            if (queries.equals("unlimited") && window == null) {
                limit = LimitSettings.DomainLimit.UNLIMITED;
            } else {
                long q = Values.count(queries, 1, MAX_QUERIES);
                Duration w = window == null ? null : positive(Values.duration(window));
                limit = new LimitSettings.DomainLimit(q, w);
            }
            domains.put(ascii, limit);
            domainOrigins.put(ascii, where);
            return this;
        }

        /** Where {@code key} was set, as an error's prefix: a file and line with the key, a flag, or the key. */
        private String where(String key) {
            return origins.getOrDefault(key, key);
        }

        /** Validates what depends on several keys and fills in the upstreams from resolv.conf. */
        public Settings build() throws ConfigException {
            List<InetSocketAddress> l = listen.isEmpty()
                    ? List.of(new InetSocketAddress("127.0.0.1", DEFAULT_PORT)) : listen;
            List<InetSocketAddress> u = upstreams.isEmpty() ? systemResolvers() : upstreams;
            checkNoDuplicates(l, where("listen"));
            checkNoLoop(l, u, where("upstreams"));
            LimitSettings.DomainLimit defaultLimit = new LimitSettings.DomainLimit(limit, window);
            Map<String, LimitSettings.DomainLimit> overrides = new LinkedHashMap<>();
            domains.forEach((name, d) -> overrides.put(name,
                    d.window() == null ? new LimitSettings.DomainLimit(d.queries(), window) : d));
            LimitSettings limits = new LimitSettings(defaultLimit, algorithm, burst, action, dryRun, maxDomains,
                    janitorInterval, publicSuffixList, overrides, exemptClients, domainOrigins);
            if (backend == BackendSettings.Kind.REDIS && algorithm == LimitSettings.Algorithm.TOKEN_BUCKET) {
                throw new ConfigException(where("limits.algorithm") + ": token-bucket is not offered with backend redis;"
                        + " use fixed-window or sliding-window");
            }
            if (burst != 0 && algorithm != LimitSettings.Algorithm.TOKEN_BUCKET) {
                throw new ConfigException(where("limits.burst") + ": only token-bucket has a burst (the algorithm is "
                        + algorithm + ")");
            }
            BackendSettings b = new BackendSettings(backend, redis, redisCluster, redisMode, redisTimeout,
                    redisFailure, syncInterval, stateFile, resetCorruptStateFile);
            return new Settings(l, u, threads, timeout, queryTimeout, maxInflight, maxTcpConnections, tcpIdleTimeout,
                    upstreamSockets, udpSteering, maxFails, healthCheckInterval,
                    new HealthCheck(healthCheckName, healthCheckType, healthCheckMustResolve), limits, b, metrics);
        }

        /** The same address twice would bind twice: say so rather than "address already in use". */
        private static void checkNoDuplicates(List<InetSocketAddress> listen, String where) throws ConfigException {
            Set<InetSocketAddress> seen = new HashSet<>();
            for (InetSocketAddress a : listen) {
                if (a.getPort() != 0 && !seen.add(a)) {
                    throw new ConfigException(where + ": " + Addresses.text(a) + " is given twice");
                }
            }
        }

        /**
         * An upstream that is one of sluice's own listen addresses sends every query back to
         * sluice, which forwards it again until max-inflight fills: refuse to start. A wildcard
         * listen address covers every address of this host on its port: 0.0.0.0 the IPv4 ones,
         * :: both families (Linux's default, IPV6_V6ONLY off).
         */
        private static void checkNoLoop(List<InetSocketAddress> listen, List<InetSocketAddress> upstreams,
                                        String where) throws ConfigException {
            for (InetSocketAddress u : upstreams) {
                for (InetSocketAddress l : listen) {
                    InetAddress la = l.getAddress();
                    boolean covered = la.isAnyLocalAddress() && isThisHost(u.getAddress())
                            && (la instanceof Inet6Address || !(u.getAddress() instanceof Inet6Address));
                    if (u.getPort() == l.getPort() && (u.getAddress().equals(la) || covered)) {
                        throw new ConfigException(where + ": " + Addresses.text(u) + " is sluice's own listen address "
                                + Addresses.text(l) + "; queries would loop back to sluice");
                    }
                }
            }
        }

        private static boolean isThisHost(InetAddress a) {
            try {
                return a.isLoopbackAddress() || a.isAnyLocalAddress() || NetworkInterface.getByInetAddress(a) != null;
            } catch (SocketException e) {
                return false;
            }
        }

        private static List<InetSocketAddress> systemResolvers() throws ConfigException {
            List<InetSocketAddress> servers = ResolverConfig.getCurrentConfig().servers();
            if (servers.isEmpty()) {
                throw new ConfigException("upstreams: none given and /etc/resolv.conf lists no nameserver;"
                        + " use --upstream HOST:PORT");
            }
            return servers;
        }

        private static List<InetSocketAddress> addresses(List<String> values, int defaultPort, boolean literal)
                throws ConfigException {
            if (values.isEmpty()) {
                throw new ConfigException("needs at least one address");
            }
            List<InetSocketAddress> out = new ArrayList<>();
            for (String v : values) {
                out.add(Values.address(v, defaultPort, literal));
            }
            return out;
        }

        private static long unlimited(String value) throws ConfigException {
            if (!value.trim().equals("unlimited")) {
                throw new ConfigException("expected 'unlimited' or { queries: N, window: DURATION }");
            }
            return 0;
        }

        private static URI redisUri(String value) throws ConfigException {
            URI u;
            try {
                u = new URI(value.trim());
            } catch (java.net.URISyntaxException e) {
                throw new ConfigException("'" + value + "' is not a URI: " + e.getReason());
            }
            if (!"redis".equals(u.getScheme()) && !"rediss".equals(u.getScheme()) || u.getHost() == null) {
                throw new ConfigException("'" + value + "': expected redis://host:port[/db] or rediss://host:port[/db]");
            }
            return u;
        }

        private static List<String> seeds(List<String> values) throws ConfigException {
            List<String> out = new ArrayList<>();
            for (String v : values) {
                for (String one : v.split(",")) {
                    if (!one.isBlank()) {
                        InetSocketAddress a = Values.address(one, 6379, false);
                        out.add(a.getHostString() + ":" + a.getPort());
                    }
                }
            }
            if (out.isEmpty()) {
                throw new ConfigException("needs at least one host:port");
            }
            return out;
        }

        private static List<Network> networks(List<String> values) throws ConfigException {
            List<Network> out = new ArrayList<>();
            for (String v : values) {
                out.add(Network.parse(v));
            }
            return out;
        }

        private static Path readable(String value) throws ConfigException {
            Path p = Path.of(value.trim());
            if (!Files.isReadable(p)) {
                throw new ConfigException("cannot read '" + value + "'");
            }
            return p;
        }

        private static String one(List<String> values) throws ConfigException {
            if (values.size() != 1) {
                throw new ConfigException("takes one value, got " + values.size());
            }
            return values.get(0);
        }

        private static Duration positive(Duration d) throws ConfigException {
            if (d.isZero()) {
                throw new ConfigException("must be longer than 0");
            }
            return d;
        }
    }
}
