package io.sluice.config;

import io.sluice.transport.Addresses;
import io.sluice.transport.ServerTls;
import io.sluice.transport.UpstreamTls;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.xbill.DNS.ResolverConfig;
import org.xbill.DNS.Type;

/**
 * Everything sluice runs with, validated: every setting of {@link SettingTable} with its value
 * (defaults filled in, the upstreams and threads as worked out), read by {@link #value} or by the
 * accessors below, one a setting, and the sections the parts take whole ({@link #limits},
 * {@link #cache}, {@link #backend}, {@link #dnstap}), made from those values. Built by
 * {@link Builder} from the YAML file, then flags; a reload makes the next from these and the
 * changed values ({@link #with}), comparing key by key. The keys, defaults and meanings are
 * documented in {@code conf/sluice.yml} and {@code docs/configuration.md}.
 */
public final class Settings {
    private final Map<Setting<?>, Object> values;
    /** The file the settings were read from, which a reload reads again; or null. */
    private final Path configFile;
    private final HealthCheck healthCheck;
    private final LimitSettings limits;
    private final CacheSettings cache;
    private final BackendSettings backend;
    private final DnstapSettings dnstap;

    private Settings(Map<Setting<?>, Object> values, Map<String, LimitSettings.DomainLimit> domains,
                     Map<String, String> domainOrigins, Path configFile) {
        Map<Setting<?>, Object> v = Collections.unmodifiableMap(new HashMap<>(values)); // some are null: no Map.copyOf
        this.values = v;
        this.configFile = configFile;
        this.healthCheck = new HealthCheck(at(v, SettingTable.HEALTH_CHECK_NAME), at(v, SettingTable.HEALTH_CHECK_TYPE),
                at(v, SettingTable.HEALTH_CHECK_MUST_RESOLVE));
        this.limits = new LimitSettings(
                new LimitSettings.DomainLimit(at(v, SettingTable.LIMIT), at(v, SettingTable.WINDOW)),
                at(v, SettingTable.ALGORITHM), at(v, SettingTable.BURST), at(v, SettingTable.ACTION),
                at(v, SettingTable.DRY_RUN), at(v, SettingTable.MAX_DOMAINS), at(v, SettingTable.JANITOR_INTERVAL),
                at(v, SettingTable.PUBLIC_SUFFIX_LIST), domains, at(v, SettingTable.EXEMPT_CLIENTS), domainOrigins,
                at(v, SettingTable.REVERSE_IPV4_PREFIX), at(v, SettingTable.REVERSE_IPV6_PREFIX),
                new LimitSettings.PerClient(new LimitSettings.DomainLimit(at(v, SettingTable.PER_CLIENT_QUERIES),
                        at(v, SettingTable.PER_CLIENT_WINDOW)), at(v, SettingTable.PER_CLIENT_IPV4_PREFIX),
                        at(v, SettingTable.PER_CLIENT_IPV6_PREFIX)),
                new LimitSettings.Flood(at(v, SettingTable.FLOOD_DETECT), at(v, SettingTable.FLOOD_NXDOMAIN_RATIO),
                        at(v, SettingTable.FLOOD_MIN_ANSWERS), at(v, SettingTable.FLOOD_BUDGET),
                        at(v, SettingTable.FLOOD_PRESSURE), at(v, SettingTable.FLOOD_EXEMPT_DOMAINS)),
                at(v, SettingTable.MAX_INFLIGHT_PER_DOMAIN), at(v, SettingTable.VERIFIED_SHARE), at(v, SettingTable.SLIP));
        this.backend = new BackendSettings(at(v, SettingTable.BACKEND), at(v, SettingTable.REDIS),
                at(v, SettingTable.REDIS_CLUSTER), at(v, SettingTable.REDIS_MODE), at(v, SettingTable.REDIS_TIMEOUT),
                at(v, SettingTable.REDIS_FAILURE), at(v, SettingTable.SYNC_INTERVAL), at(v, SettingTable.STATE_FILE),
                at(v, SettingTable.RESET_CORRUPT_STATE_FILE));
        this.cache = new CacheSettings(at(v, SettingTable.CACHE_SIZE), at(v, SettingTable.CACHE_MAX_BYTES),
                at(v, SettingTable.CACHE_MAX_TTL), at(v, SettingTable.CACHE_MAX_NEGATIVE_TTL),
                at(v, SettingTable.CACHE_SERVFAIL_TTL), at(v, SettingTable.CACHE_STALE_TTL),
                at(v, SettingTable.CACHE_STALE_REFRESH_TIME), at(v, SettingTable.CACHE_STALE_WHEN_LIMITED),
                at(v, SettingTable.CACHE_PREFETCH), at(v, SettingTable.CACHE_NETWORKS_PER_QUESTION));
        this.dnstap = new DnstapSettings(at(v, SettingTable.DNSTAP_SOCKET), at(v, SettingTable.DNSTAP_IDENTITY),
                at(v, SettingTable.DNSTAP_VERSION), at(v, SettingTable.DNSTAP_QUEUE_SIZE),
                at(v, SettingTable.DNSTAP_MESSAGES));
    }

    /** The value {@code s} has here (null where it has none). */
    @SuppressWarnings("unchecked")
    public <T> T value(Setting<T> s) {
        return (T) values.get(s);
    }

    /**
     * These settings with {@code changes} in: each setting's new value, and the limits' domain
     * overrides (with their origins) in place of these. Nothing is checked again: the values come
     * from settings that were.
     */
    public Settings with(Map<Setting<?>, Object> changes, Map<String, LimitSettings.DomainLimit> domains,
                         Map<String, String> domainOrigins) {
        Map<Setting<?>, Object> v = new HashMap<>(values);
        v.putAll(changes);
        return new Settings(v, domains, domainOrigins, configFile);
    }

    @SuppressWarnings("unchecked")
    private static <T> T at(Map<Setting<?>, Object> values, Setting<T> s) {
        return (T) values.get(s);
    }

    /** Addresses served over UDP and TCP. */
    public List<InetSocketAddress> listen() {
        return value(SettingTable.LISTEN);
    }

    /** The TLS certificate chain (PEM), or null. */
    public Path tlsCertFile() {
        return value(SettingTable.TLS_CERT_FILE);
    }

    /** The TLS private key (PEM), or null. */
    public Path tlsKeyFile() {
        return value(SettingTable.TLS_KEY_FILE);
    }

    /** Client networks answered; the rest get {@code aclAction}. */
    public List<Network> allowClients() {
        return value(SettingTable.ALLOW_CLIENTS);
    }

    /** What a client outside {@code allowClients} gets. */
    public SettingTable.AclAction aclAction() {
        return value(SettingTable.ACL_ACTION);
    }

    /** Whether {@code allowClients} is the default list (conf/sluice.yml writes it out). */
    public boolean aclIsDefault() {
        return allowClients().equals(SettingTable.PRIVATE_NETWORKS);
    }

    /** Sources whose datagrams and connections start with a PROXY v2 header naming the client. */
    public List<Network> proxyProtocolFrom() {
        return value(SettingTable.PROXY_PROTOCOL_FROM);
    }

    /** Sources not held to the per-client connection bounds: a load balancer or forwarder in front. */
    public List<Network> connectionExemptClients() {
        return value(SettingTable.CONNECTION_EXEMPT_CLIENTS);
    }

    /** Resolvers, tried in order. */
    public List<UpstreamAddress> upstreams() {
        return value(SettingTable.UPSTREAMS);
    }

    /** Which upstream a query asks first. */
    public UpstreamPolicy upstreamPolicy() {
        return value(SettingTable.UPSTREAM_POLICY);
    }

    /** What a TLS upstream's certificate must chain to, or null for the JDK's trust store. */
    public Path upstreamTlsCaFile() {
        return value(SettingTable.UPSTREAM_TLS_CA_FILE);
    }

    /** Event-loop threads. */
    public int threads() {
        return value(SettingTable.THREADS);
    }

    /** Wait for one upstream before trying the next. */
    public Duration timeout() {
        return value(SettingTable.TIMEOUT);
    }

    /** The most a query may take over all its upstreams before SERVFAIL. */
    public Duration queryTimeout() {
        return value(SettingTable.QUERY_TIMEOUT);
    }

    /** Queries waiting on upstreams at once, over all threads. */
    public int maxInflight() {
        return value(SettingTable.MAX_INFLIGHT);
    }

    /** Client TCP connections at once. */
    public int maxTcpConnections() {
        return value(SettingTable.MAX_TCP_CONNECTIONS);
    }

    /** A client TCP connection with no whole query and nothing owed for this long is closed. */
    public Duration tcpIdleTimeout() {
        return value(SettingTable.TCP_IDLE_TIMEOUT);
    }

    /** Client TCP connections at once from one IPv4 address or IPv6 /64. */
    public int tcpPerClient() {
        return value(SettingTable.MAX_TCP_CONNECTIONS_PER_CLIENT);
    }

    /** New client TCP and TLS connections a second from one IPv4 address or IPv6 /64; 0 = no bound. */
    public int tcpConnectionRatePerClient() {
        return value(SettingTable.TCP_CONNECTION_RATE_PER_CLIENT);
    }

    /** Queries read on one connection before it winds down; 0 = no limit. */
    public int tcpQueriesPerConnection() {
        return value(SettingTable.MAX_TCP_QUERIES_PER_CONNECTION);
    }

    /** How long a client connection may stay open before it winds down. */
    public Duration tcpMaxDuration() {
        return value(SettingTable.MAX_TCP_CONNECTION_DURATION);
    }

    /** UDP sockets (source ports) per thread for upstream queries. */
    public int upstreamSockets() {
        return value(SettingTable.UPSTREAM_SOCKETS);
    }

    /** How long one upstream socket is used before a new one replaces it; zero: for ever. */
    public Duration upstreamSocketLifetime() {
        return value(SettingTable.UPSTREAM_SOCKET_LIFETIME);
    }

    /** Send names upstream over UDP in a random case that replies must echo (0x20). */
    public boolean randomizeCase() {
        return value(SettingTable.RANDOMIZE_CASE);
    }

    /** Ask again over UDP at the upstream's retransmit timeout, keeping the earlier attempts. */
    public boolean retransmit() {
        return value(SettingTable.RETRANSMIT);
    }

    /** The most a UDP answer carries, whatever the client offers. */
    public int maxUdpSize() {
        return value(SettingTable.MAX_UDP_SIZE);
    }

    /** How a listen address's datagrams are shared between the threads' sockets. */
    public UdpSteering udpSteering() {
        return value(SettingTable.UDP_STEERING);
    }

    /** Consecutive timeouts after which an upstream is marked down. */
    public int maxFails() {
        return value(SettingTable.MAX_FAILS);
    }

    /** How often a down upstream is probed. */
    public Duration healthCheckInterval() {
        return value(SettingTable.HEALTH_CHECK_INTERVAL);
    }

    /** What a probe asks, and what counts as alive. */
    public HealthCheck healthCheck() {
        return healthCheck;
    }

    /** The per-domain limits. */
    public LimitSettings limits() {
        return limits;
    }

    /** The answer cache. */
    public CacheSettings cache() {
        return cache;
    }

    /** Where the limits' counters live. */
    public BackendSettings backend() {
        return backend;
    }

    /** Where dnstap goes, if anywhere. */
    public DnstapSettings dnstap() {
        return dnstap;
    }

    /** Where to serve /metrics, or null for nowhere. */
    public InetSocketAddress metrics() {
        return value(SettingTable.METRICS);
    }

    /** Where to serve the admin API, or null for nowhere. */
    public InetSocketAddress admin() {
        return value(SettingTable.ADMIN);
    }

    /** The file of the admin API's bearer token, or null for none. */
    public Path adminTokenFile() {
        return value(SettingTable.ADMIN_TOKEN_FILE);
    }

    /** The file the settings were read from, which a reload reads again; or null. */
    public Path configFile() {
        return configFile;
    }

    /** The root logger's level, or null to leave it to logback.xml. */
    public String logLevel() {
        return value(SettingTable.LOG_LEVEL);
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
     * Which upstream a query asks first; after it, on a timeout or failure, the ones after it in
     * the operator's order, wrapping round, down ones skipped. Each prints as its configuration name.
     */
    public enum UpstreamPolicy {
        /** The operator's order: the first that is up (dnsdist's firstAvailable, CoreDNS's sequential). */
        SEQUENTIAL,
        /** A random one first, then the rest in order from it (CoreDNS forward's default). */
        RANDOM,
        /** Each thread's next one first, in turn (CoreDNS's round_robin). */
        ROUND_ROBIN;

        @Override
        public String toString() {
            return Values.configName(this);
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

    /**
     * Collects settings by key ({@link SettingTable}), each value checked as it arrives; the last
     * value for a key wins.
     */
    public static final class Builder {
        /** Every key {@link #set} takes, for telling a misspelt key from a bad value. */
        public static final Set<String> KEYS = keys();
        static final String UNKNOWN_KEY = "unknown key";
        private Path configFile;

        private final Map<Setting<?>, Object> values = new HashMap<>();
        private final Map<String, LimitSettings.DomainLimit> domains = new LinkedHashMap<>();
        /** Where each key and each domain override was last set (file and line, or flag), for errors found later. */
        private final Map<String, String> origins = new LinkedHashMap<>();
        private final Map<String, String> domainOrigins = new LinkedHashMap<>();

        private static Set<String> keys() {
            Set<String> keys = new LinkedHashSet<>();
            for (Setting<?> s : SettingTable.ALL) {
                keys.add(s.key());
            }
            return Collections.unmodifiableSet(keys);
        }

        /** {@link #set(String, List)}, remembering {@code where} (a file line, a flag) for errors found at build. */
        public Builder set(String key, List<String> values, String where) throws ConfigException {
            set(key, values);
            origins.put(key, where);
            return this;
        }

        /**
         * Sets one key. A scalar key takes exactly one value; a list key ({@code listen},
         * {@code upstreams}, ...) one or more.
         *
         * @throws ConfigException naming the problem with the value (not the key: the caller knows
         *                         whether it came from a flag or a file line)
         */
        public Builder set(String key, List<String> values) throws ConfigException {
            Setting<?> s = SettingTable.byKey(key);
            if (s == null) {
                throw new ConfigException(UNKNOWN_KEY);
            }
            Object value = s.parse(values);
            // limits.default: unlimited is the default budget of 0, whichever was set last
            this.values.put(s == SettingTable.LIMIT_UNLIMITED ? SettingTable.LIMIT : s, value);
            return this;
        }

        /** The value set for {@code s}, or its default (null when it has none). */
        @SuppressWarnings("unchecked")
        private <T> T get(Setting<T> s) {
            return values.containsKey(s) ? (T) values.get(s) : s.defaultValue();
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
                long q = Values.count(queries, 1, SettingTable.MAX_QUERIES);
                Duration w = window == null ? null : SettingTable.positiveDuration(window);
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

        /** The file these settings are read from, for a reload to read again. */
        public Builder configFile(Path file) {
            this.configFile = file;
            return this;
        }

        /** The file given to {@link #configFile(Path)}, or null. */
        public Path configFile() {
            return configFile;
        }

        /** Validates what depends on several keys and fills in the upstreams from resolv.conf. */
        public Settings build() throws ConfigException {
            Duration lifetime = get(SettingTable.UPSTREAM_SOCKET_LIFETIME);
            int sockets = get(SettingTable.UPSTREAM_SOCKETS);
            if (!lifetime.isZero() && lifetime.compareTo(Duration.ofSeconds(sockets)) < 0) {
                // one replacement a second per upstream at most: each replaced socket stays open a timeout more
                throw new ConfigException(where("upstream-socket-lifetime") + ": at least 1s per upstream socket ("
                        + sockets + "s with upstream-sockets " + sockets + "), or 0 to keep them");
            }
            InetSocketAddress admin = get(SettingTable.ADMIN);
            if (admin != null && !admin.getAddress().isLoopbackAddress() && get(SettingTable.ADMIN_TOKEN_FILE) == null) {
                throw new ConfigException(where("admin.listen") + ": " + Addresses.text(admin) + " is not a loopback"
                        + " address: give admin.token-file (--admin-token-file) so that only holders of the token"
                        + " change limits");
            }
            List<InetSocketAddress> l = get(SettingTable.LISTEN);
            List<UpstreamAddress> u = values.containsKey(SettingTable.UPSTREAMS)
                    ? get(SettingTable.UPSTREAMS) : systemResolvers();
            List<InetSocketAddress> upstreamAddresses = u.stream().map(UpstreamAddress::address).toList();
            checkNoDuplicates(l, where("listen"));
            if (values.containsKey(SettingTable.UPSTREAMS)) {
                checkNoDuplicates(upstreamAddresses, where("upstreams"));
            }
            checkNoLoop(l, upstreamAddresses, where("upstreams"));
            checkUpstreamTls(u);
            Duration window = get(SettingTable.WINDOW);
            Map<String, LimitSettings.DomainLimit> overrides = new LinkedHashMap<>();
            domains.forEach((name, d) -> overrides.put(name,
                    d.window() == null ? new LimitSettings.DomainLimit(d.queries(), window) : d));
            LimitSettings.Algorithm algorithm = get(SettingTable.ALGORITHM);
            if (get(SettingTable.BURST) != 0 && algorithm != LimitSettings.Algorithm.TOKEN_BUCKET) {
                throw new ConfigException(where("limits.burst") + ": only token-bucket has a burst (the algorithm is "
                        + algorithm + ")");
            }
            Map<Setting<?>, Object> resolved = new HashMap<>();
            for (Setting<?> s : SettingTable.ALL) {
                resolved.put(s, get(s));
            }
            Integer threads = get(SettingTable.THREADS);
            resolved.put(SettingTable.THREADS, threads == null ? Runtime.getRuntime().availableProcessors() : threads);
            resolved.put(SettingTable.UPSTREAMS, u);
            Settings settings = new Settings(resolved, overrides, domainOrigins, configFile);
            checkCacheFits(settings.cache(), settings.threads());
            checkTlsListeners(settings, l);
            return settings;
        }

        /**
         * The modules' TLS listeners ({@link SettingSection#tlsListeners}) each have ports of their
         * own, apart from listen's and from each other's, and, when any is given, a certificate and
         * a key that make a TLS context.
         */
        private void checkTlsListeners(Settings settings, List<InetSocketAddress> listen) throws ConfigException {
            Map<InetSocketAddress, String> taken = new HashMap<>();
            listen.forEach(a -> taken.put(a, "listen"));
            String first = null;
            for (SettingSection section : SettingTable.SECTIONS) {
                for (Setting<List<InetSocketAddress>> s : section.tlsListeners()) {
                    List<InetSocketAddress> addresses = settings.value(s);
                    checkNoDuplicates(addresses, where(s.key()));
                    for (InetSocketAddress a : addresses) {
                        String other = a.getPort() == 0 ? null : taken.putIfAbsent(a, s.key());
                        if (other != null) {
                            throw new ConfigException(where(s.key()) + ": " + Addresses.text(a) + " is a " + other
                                    + " address too: each front end needs a port of its own");
                        }
                    }
                    if (first == null && !addresses.isEmpty()) {
                        first = s.key();
                    }
                }
            }
            if (first == null) {
                return;
            }
            Path cert = get(SettingTable.TLS_CERT_FILE);
            Path key = get(SettingTable.TLS_KEY_FILE);
            if (cert == null || key == null) {
                throw new ConfigException(where(first) + ": needs tls-cert-file and tls-key-file");
            }
            try {
                ServerTls.load(cert, key);
            } catch (javax.net.ssl.SSLException e) {
                throw new ConfigException(where("tls-cert-file") + ", " + where("tls-key-file") + ": "
                        + ServerTls.whatIsWrong(e));
            }
        }

        /** The trust anchors of TLS upstreams load (the file is read only while one is tls://). */
        private void checkUpstreamTls(List<UpstreamAddress> upstreams) throws ConfigException {
            if (upstreams.stream().noneMatch(UpstreamAddress::overTls)) {
                return;
            }
            Path ca = get(SettingTable.UPSTREAM_TLS_CA_FILE);
            try {
                UpstreamTls.load(ca);
            } catch (GeneralSecurityException e) {
                throw new ConfigException((ca == null ? "the JDK's trust store" : where("upstream-tls-ca-file"))
                        + ": " + e.getMessage());
            }
        }

        /**
         * The cache's rings and index are taken at start: more than half the heap would leave too
         * little for the rest. Names the key that takes more of it.
         */
        private void checkCacheFits(CacheSettings cache, int loops) throws ConfigException {
            if (!cache.on()) {
                return;
            }
            long rings = cache.ringBytes(loops) * loops;
            long index = cache.indexBytes();
            long heap = Runtime.getRuntime().maxMemory();
            if (rings + index > heap / 2) {
                String key = rings >= index ? where("cache.max-bytes") + ": " + cache.maxBytes()
                        : where("cache.size") + ": " + cache.size();
                throw new ConfigException(key + " is more than half the heap (" + heap + " bytes) with "
                        + rings + " bytes of answers (" + loops + " loops) and " + index + " of index: lower it"
                        + " or raise -Xmx");
            }
        }

        /**
         * The same address twice: a listen address would bind twice (say so rather than "address
         * already in use"), an upstream would be tried twice in a row and its two series be one.
         */
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

        private static List<UpstreamAddress> systemResolvers() throws ConfigException {
            List<InetSocketAddress> servers = ResolverConfig.getCurrentConfig().servers();
            if (servers.isEmpty()) {
                throw new ConfigException("upstreams: none given and /etc/resolv.conf lists no nameserver;"
                        + " use --upstream HOST:PORT");
            }
            return servers.stream().map(UpstreamAddress::plain).toList();
        }
    }
}
