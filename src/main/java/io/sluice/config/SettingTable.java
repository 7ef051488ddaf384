package io.sluice.config;

import io.sluice.config.Setting.Applied;
import io.sluice.domain.RegistrableDomains;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import org.xbill.DNS.Type;

/**
 * Every setting sluice has, each declared once, in the order {@code --help} lists them, with what
 * a reload does with it ({@link Setting.Applied}): the reload plan is worked out from these alone.
 * The server's own are declared here; a module's, in its package's {@link SettingSection}, which
 * this table lists after them. A new setting is one declaration, the code that reads it
 * ({@link Settings#value} or an accessor of {@code Settings}), and its lines in
 * {@code conf/sluice.yml}; {@code docs/configuration.md} is generated from this table (tests check
 * both).
 */
public final class SettingTable {
    private SettingTable() {
    }

    /** Listen port when none is given: unprivileged, clear of mDNS (5353), LLMNR (5355) and the benchmark's upstream (5300). */
    public static final int DEFAULT_PORT = 1053;
    public static final int UPSTREAM_DEFAULT_PORT = 53;
    /** DNS over TLS's port (RFC 7858), a tls:// upstream's when it names none. */
    public static final int DOT_PORT = 853;
    /** Largest limit: counters are 31-bit. */
    public static final long MAX_QUERIES = Integer.MAX_VALUE;
    /** The most queries that may wait on upstreams, at all ({@code max-inflight}) or for one domain. */
    public static final int MAX_INFLIGHT_QUERIES = 1_000_000;

    private static final Map<String, Setting<?>> BY_KEY = new LinkedHashMap<>();

    public static final Setting<List<InetSocketAddress>> LISTEN = list("listen", "--listen", "HOST:PORT",
            "127.0.0.1:" + DEFAULT_PORT, List.of(new InetSocketAddress("127.0.0.1", DEFAULT_PORT)),
            v -> addresses(v, DEFAULT_PORT, true), Applied.RESTART, "Serve UDP and TCP here; repeatable.");
    public static final Setting<List<UpstreamAddress>> UPSTREAMS = list("upstreams", "--upstream", "HOST:PORT",
            "/etc/resolv.conf", null, SettingTable::upstreams, Applied.FORWARDING,
            "Upstream resolver, tried in order; tls://HOST[:PORT][#NAME] asks it over TLS (port 853); repeatable.");
    public static final Setting<Settings.UpstreamPolicy> UPSTREAM_POLICY = one("upstream-policy", "--upstream-policy",
            "NAME", "sequential", Settings.UpstreamPolicy.SEQUENTIAL,
            v -> Values.named(v, Settings.UpstreamPolicy.values()), Applied.FORWARDING,
            "Which upstream a query asks first: sequential (the first up, in order), random or round-robin;"
                    + " the others after it, in order.");
    public static final Setting<Path> UPSTREAM_TLS_CA_FILE = one("upstream-tls-ca-file", "--upstream-tls-ca-file",
            "FILE", "the JDK's trust store", null, SettingTable::readable, Applied.FORWARDING,
            "The certificates (PEM) a tls:// upstream's must chain to, instead of the JDK's trust store.");
    /** dnsdist's default ACL: every address that is not the Internet's. */
    public static final List<Network> PRIVATE_NETWORKS = networksOf("127.0.0.0/8", "::1/128", "10.0.0.0/8",
            "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16", "fe80::/10", "fc00::/7");
    public static final Setting<List<Network>> ALLOW_CLIENTS = list("allow-clients", "--allow-clients", "CIDR",
            "loopback, RFC 1918, CGNAT, link-local, ULA", PRIVATE_NETWORKS, SettingTable::someNetworks, Applied.CLIENT_RULES,
            "Clients answered; repeatable; given, it replaces the default. Others get acl-action.");
    public static final Setting<Path> TLS_CERT_FILE = one("tls-cert-file", "--tls-cert-file", "FILE", "none", null,
            SettingTable::readable, Applied.RESTART, "The TLS certificate chain, PEM (certbot's fullchain.pem); read again at each reload.");
    public static final Setting<Path> TLS_KEY_FILE = one("tls-key-file", "--tls-key-file", "FILE", "none", null,
            SettingTable::readable, Applied.RESTART, "The TLS private key, PEM, PKCS#8 (certbot's privkey.pem); read again at each reload.");
    public static final Setting<List<Network>> PROXY_PROTOCOL_FROM = list("proxy-protocol-from",
            "--proxy-protocol-from", "CIDR", "none", List.of(), SettingTable::networks, Applied.CLIENT_RULES,
            "Sources that put a PROXY v2 header before each datagram and TCP connection, naming the client;"
                    + " repeatable.");
    public static final Setting<List<Network>> CONNECTION_EXEMPT_CLIENTS = list("connection-exempt-clients",
            "--connection-exempt-clients", "CIDR", "none", List.of(), SettingTable::networks, Applied.CLIENT_RULES,
            "Sources not held to max-tcp-connections-per-client and tcp-connection-rate-per-client (a load balancer"
                    + " or forwarder in front, whose many connections are many clients'); repeatable.");
    public static final Setting<AclAction> ACL_ACTION = one("acl-action", null, null, "refused", AclAction.REFUSED,
            v -> Values.named(v, AclAction.values()), Applied.CLIENT_RULES, "What a client outside allow-clients gets.");
    public static final Setting<Integer> THREADS = one("threads", "--threads", "N", "number of cores", null,
            v -> Values.integer(v, 1, 1024), Applied.RESTART, "Event-loop threads.");
    public static final Setting<Settings.UdpSteering> UDP_STEERING = one("udp-steering", "--udp-steering", "MODE",
            "auto", Settings.UdpSteering.AUTO, v -> Values.named(v, Settings.UdpSteering.values()), Applied.RESTART,
            "Which thread's UDP socket reads a datagram: cpu (the receiving CPU's), hash (the kernel's"
                    + " hash of addresses and ports) or auto (cpu on loopback addresses, hash elsewhere).");
    public static final Setting<Duration> TIMEOUT = one("timeout", "--timeout", "DURATION", "2s",
            Duration.ofSeconds(2), SettingTable::positiveDuration, Applied.FORWARDING,
            "The most one attempt waits for its upstream (with retransmit, the ceiling of its retransmit timeout);"
                    + " then the next upstream, or SERVFAIL (over TCP or TLS with no other upstream to ask in time,"
                    + " the attempt waits until query-timeout).");
    public static final Setting<Duration> QUERY_TIMEOUT = one("query-timeout", "--query-timeout", "DURATION", "4s",
            Duration.ofSeconds(4), SettingTable::positiveDuration, Applied.FORWARDING,
            "The most a query may take over all its attempts before SERVFAIL.");
    public static final Setting<Integer> MAX_INFLIGHT = one("max-inflight", null, null, "65536", 65_536,
            v -> Values.integer(v, 1, MAX_INFLIGHT_QUERIES), Applied.FORWARDING, "Queries waiting on upstreams at once, over all threads.");
    public static final Setting<Integer> MAX_TCP_CONNECTIONS = one("max-tcp-connections", null, null, "1000", 1_000,
            v -> Values.integer(v, 1, 1_000_000), Applied.RESTART, "Client TCP connections open at once.");
    public static final Setting<Duration> TCP_IDLE_TIMEOUT = one("tcp-idle-timeout", null, null, "10s",
            Duration.ofSeconds(10), SettingTable::positiveDuration, Applied.RESTART,
            "A client TCP connection with no whole query and nothing owed for this long is closed.");
    public static final Setting<Integer> MAX_TCP_CONNECTIONS_PER_CLIENT = one("max-tcp-connections-per-client", null,
            null, "32", 32, v -> Values.integer(v, 1, 1_000_000), Applied.RESTART,
            "Client TCP connections open at once from one IPv4 address or IPv6 /64.");
    public static final Setting<Integer> TCP_CONNECTION_RATE_PER_CLIENT = one("tcp-connection-rate-per-client", null,
            null, "0", 0, v -> Values.integer(v, 0, 1_000_000), Applied.RESTART,
            "New client TCP and TLS connections a second from one IPv4 address or IPv6 /64; past it, closed at once; 0 = no bound.");
    public static final Setting<Integer> MAX_TCP_QUERIES_PER_CONNECTION = one("max-tcp-queries-per-connection", null,
            null, "0", 0, v -> Values.integer(v, 0, Integer.MAX_VALUE), Applied.RESTART,
            "Queries read on one client connection before it is closed (once answered); 0 = no limit.");
    public static final Setting<Duration> MAX_TCP_CONNECTION_DURATION = one("max-tcp-connection-duration", null, null,
            "10m", Duration.ofMinutes(10), SettingTable::positiveDuration, Applied.RESTART,
            "How long a client connection may stay open; then it is closed once what it asked is answered.");
    public static final Setting<Integer> UPSTREAM_SOCKETS = one("upstream-sockets", null, null, "8", 8,
            v -> Values.integer(v, 1, 256), Applied.FORWARDING, "UDP sockets (source ports) per thread for upstream queries.");
    public static final Setting<Duration> UPSTREAM_SOCKET_LIFETIME = one("upstream-socket-lifetime", null, null, "60s",
            Duration.ofSeconds(60), Durations::parse, Applied.FORWARDING,
            "How long an upstream socket (source port) is used before a new one replaces it; 0 = for ever.");
    public static final Setting<Boolean> RANDOMIZE_CASE = one("randomize-case", null, null,
            "true", true, Values::bool, Applied.FORWARDING,
            "Send names upstream over UDP in a random mix of letter case (0x20) and accept only replies that echo it.");
    public static final Setting<Boolean> RETRANSMIT = one("retransmit", null, null, "true", true, Values::bool,
            Applied.FORWARDING, "Ask again over UDP when no reply came within the upstream's retransmit timeout (from"
                    + " its round-trip times, 50 ms to timeout), the earlier attempts still taken if they answer late;"
                    + " false: one attempt per upstream, each waiting timeout.");
    public static final Setting<Integer> MAX_UDP_SIZE = one("max-udp-size", null, null, "1232", 1232,
            v -> Values.integer(v, 512, 65_535), Applied.RESTART,
            "The most a UDP answer carries, whatever the client offers: larger ones go with TC (Unbound's max-udp-size).");
    public static final Setting<Integer> MAX_FAILS = one("max-fails", null, null, "3", 3,
            v -> Values.integer(v, 1, 1_000_000), Applied.FORWARDING, "Failures in a row after which an upstream is marked down.");
    public static final Setting<Duration> HEALTH_CHECK_INTERVAL = one("health-check-interval", null, null, "1s",
            Duration.ofSeconds(1), SettingTable::positiveDuration, Applied.FORWARDING, "How often a down upstream is probed.");
    public static final Setting<String> HEALTH_CHECK_NAME = one("health-check-name", null, null, ".", ".",
            Values::absoluteName, Applied.FORWARDING, "The name the probe asks for.");
    public static final Setting<Integer> HEALTH_CHECK_TYPE = one("health-check-type", null, null, "NS", Type.NS,
            Values::queryType, Applied.FORWARDING, "The type the probe asks for.");
    public static final Setting<Boolean> HEALTH_CHECK_MUST_RESOLVE = one("health-check-must-resolve", null, null,
            "false", false, Values::bool, Applied.FORWARDING, "Only a NOERROR answer to the probe counts as alive.");

    /** {@code limits.default: unlimited}: sets {@link #LIMIT} to 0 (the builder knows). */
    public static final Setting<Long> LIMIT_UNLIMITED = one("limits.default", null, null, null, null,
            SettingTable::unlimited, Applied.LIMITS, "unlimited, or { queries: N, window: DURATION }.");
    public static final Setting<Long> LIMIT = one("limits.default.queries", "--limit", "N", "0", 0L,
            v -> Values.count(v, 0, MAX_QUERIES), Applied.LIMITS, "Queries per window per registrable domain; 0 = no limit.");
    public static final Setting<Duration> WINDOW = one("limits.default.window", "--window", "DURATION", "1s",
            Duration.ofSeconds(1), SettingTable::positiveDuration, Applied.LIMITS, "Length of a limit window.");
    public static final Setting<LimitSettings.Algorithm> ALGORITHM = one("limits.algorithm", "--algorithm", "NAME",
            "fixed-window", LimitSettings.Algorithm.FIXED_WINDOW,
            v -> Values.named(v, LimitSettings.Algorithm.values()), Applied.RESTART,
            "fixed-window | sliding-window | token-bucket.");
    public static final Setting<Long> BURST = one("limits.burst", "--burst", "N", "0 (the limit)", 0L,
            v -> Values.count(v, 0, MAX_QUERIES), Applied.LIMITS, "Token-bucket capacity.");
    public static final Setting<LimitSettings.Action> ACTION = one("action", "--action", "NAME", "refused",
            LimitSettings.Action.REFUSED, v -> Values.named(v, LimitSettings.Action.values()), Applied.LIMITS,
            "refused | nxdomain | drop | truncate.");
    public static final Setting<Integer> SLIP = one("slip", "--slip", "N", "0 (off)", 0,
            v -> Values.integer(v, 0, 1_000_000), Applied.LIMITS,
            "Of the unverified UDP queries a limit refuses, every Nth gets an empty TC answer instead of the action,"
                    + " as BIND's and Knot's RRL slip: a real client behind a forged flood asks again over TCP, verified.");
    public static final Setting<Boolean> DRY_RUN = one("dry-run", "--dry-run", null, "off", false, Values::bool, Applied.LIMITS,
            "Count, log and expose what would be refused, but forward everything.");
    public static final Setting<Double> VERIFIED_SHARE = one("limits.verified-share", "--verified-share", "S", "0 (off)",
            0.0, v -> Values.fraction(v, 0, 1), Applied.LIMITS,
            "Share of each domain's budget kept for verified queries (a valid server cookie, or TCP, DoT, DoH):"
                    + " unverified ones may spend at most 1 - S of it; with a per-client budget each client's verified"
                    + " and unverified queries count apart. 0: no difference.");
    public static final Setting<Integer> MAX_DOMAINS = one("limits.max-domains", "--max-domains", "N", "1000000",
            1_000_000, v -> Values.integer(v, 1, 100_000_000), Applied.RESTART, "Counter table bound.");
    public static final Setting<Duration> JANITOR_INTERVAL = one("limits.janitor-interval", null, null, "5s",
            Duration.ofSeconds(5), SettingTable::positiveDuration, Applied.RESTART,
            "How often counters of ended windows are removed.");
    public static final Setting<Long> PER_CLIENT_QUERIES = one("limits.per-client.queries", null, null, "0", 0L,
            v -> Values.count(v, 0, MAX_QUERIES), Applied.RESTART,
            "Queries per window per client network and registrable domain, on top of the domain's; 0 = off.");
    public static final Setting<Duration> PER_CLIENT_WINDOW = one("limits.per-client.window", null, null, "1s",
            Duration.ofSeconds(1), SettingTable::positiveDuration, Applied.RESTART, "Length of a per-client window.");
    public static final Setting<Integer> PER_CLIENT_IPV4_PREFIX = one("limits.per-client.ipv4-prefix", null, null, "24",
            24, v -> Values.integer(v, 1, 32), Applied.RESTART, "IPv4 clients share a per-client budget per network of this many bits.");
    public static final Setting<Integer> PER_CLIENT_IPV6_PREFIX = one("limits.per-client.ipv6-prefix", null, null, "56",
            56, v -> Values.integer(v, 1, 128), Applied.RESTART, "IPv6 clients share a per-client budget per network of this many bits.");
    public static final Setting<Boolean> FLOOD_DETECT = one("limits.flood.detect", null, null, "true", true,
            Values::bool, Applied.RESTART, "Cut the budget of a domain whose upstream answers are mostly NXDOMAIN (a random-subdomain flood).");
    public static final Setting<Double> FLOOD_NXDOMAIN_RATIO = one("limits.flood.nxdomain-ratio", null, null, "0.5",
            0.5, v -> Values.fraction(v, 0.01, 1), Applied.LIMITS,
            "The share of a window's upstream answers for a domain that must be NXDOMAIN to call it flooded.");
    public static final Setting<Integer> FLOOD_MIN_ANSWERS = one("limits.flood.min-answers", null, null, "20", 20,
            v -> Values.integer(v, 1, 1_000_000), Applied.LIMITS,
            "Upstream answers a window must have (or the whole budget, or 2,047, if smaller) for a domain to be judged.");
    public static final Setting<Double> FLOOD_BUDGET = one("limits.flood.budget", null, null, "0.1", 0.1,
            v -> Values.fraction(v, 0.001, 1), Applied.LIMITS, "The share of its budget a flooded domain keeps for cache misses.");
    public static final Setting<Double> FLOOD_PRESSURE = one("limits.flood.pressure", null, null, "0.8", 0.8,
            v -> Values.fraction(v, 0.01, 1), Applied.LIMITS,
            "A domain is judged only in a window whose upstream answers reach this share of its budget: under it,"
                    + " a cut would refuse queries the budget lets through anyway (DNSBLs, search lists).");
    public static final Setting<List<String>> FLOOD_EXEMPT_DOMAINS = list("limits.flood.exempt-domains", null, null,
            "none", List.of(), SettingTable::domainNames, Applied.LIMITS,
            "Domains never judged a flood, whatever their NXDOMAIN share (DNSBLs, search-list suffixes); still held to"
                    + " their budget. A name counts for its registrable domain: zen.spamhaus.org exempts spamhaus.org.");
    public static final Setting<Integer> REVERSE_IPV4_PREFIX = one("limits.reverse-ipv4-prefix", null, null,
            String.valueOf(RegistrableDomains.DEFAULT_IPV4_PREFIX), RegistrableDomains.DEFAULT_IPV4_PREFIX,
            v -> multiple(Values.integer(v, 8, 32), 8), Applied.RESTART,
            "Reverse names under in-addr.arpa count per network of this many bits (8, 16, 24 or 32).");
    public static final Setting<Integer> REVERSE_IPV6_PREFIX = one("limits.reverse-ipv6-prefix", null, null,
            String.valueOf(RegistrableDomains.DEFAULT_IPV6_PREFIX), RegistrableDomains.DEFAULT_IPV6_PREFIX,
            v -> multiple(Values.integer(v, 4, 128), 4), Applied.RESTART,
            "Reverse names under ip6.arpa count per network of this many bits (a multiple of 4).");
    public static final Setting<List<Network>> EXEMPT_CLIENTS = list("limits.exempt-clients", null, null, "none",
            List.of(), SettingTable::networks, Applied.LIMITS, "Client networks never limited.");
    public static final Setting<Integer> MAX_INFLIGHT_PER_DOMAIN = one("limits.max-inflight-per-domain",
            "--max-inflight-per-domain", "N", "0", 0, v -> Values.integer(v, 0, MAX_INFLIGHT_QUERIES), Applied.LIMITS,
            "Queries of one registrable domain waiting on upstreams at once (BIND's fetches-per-zone); past it a query"
                    + " gets a stale answer or SERVFAIL at once. 0 = no bound.");
    public static final Setting<Integer> CACHE_SIZE = one("cache.size", "--cache-size", "N", "200000", 200_000,
            v -> Values.integer(v, 0, 100_000_000), Applied.RESTART, "Answers the cache keeps at most; 0 turns it off.");
    public static final Setting<Long> CACHE_MAX_BYTES = one("cache.max-bytes", null, null, "67108864", 64L << 20,
            v -> Values.count(v, CacheSettings.MIN_RING, 1L << 36), Applied.RESTART,
            "Heap taken at start for the cached answers' bytes, shared by the loops; with the index, at most half the heap.");
    public static final Setting<Duration> CACHE_MAX_TTL = one("cache.max-ttl", null, null, "24h", Duration.ofDays(1),
            SettingTable::positiveDuration, Applied.RESTART, "The longest an answer is served from the cache, whatever its TTLs.");
    public static final Setting<Duration> CACHE_MAX_NEGATIVE_TTL = one("cache.max-negative-ttl", null, null, "1h",
            Duration.ofHours(1), SettingTable::positiveDuration, Applied.RESTART,
            "The longest an NXDOMAIN or NODATA is served from the cache (else its SOA's minimum, RFC 2308).");
    public static final Setting<Duration> CACHE_SERVFAIL_TTL = one("cache.servfail-ttl", null, null, "5s",
            Duration.ofSeconds(5), Durations::parse, Applied.RESTART, "How long an upstream's SERVFAIL is served from the cache; 0 = not cached.");
    public static final Setting<Duration> CACHE_STALE_TTL = one("cache.stale-ttl", null, null, "24h", Duration.ofDays(1),
            Durations::parse, Applied.RESTART,
            "How long past its expiry an answer is served stale (TTL 30, EDE 3) when no upstream answers; 0 = never.");
    public static final Setting<Duration> CACHE_STALE_REFRESH_TIME = one("cache.stale-refresh-time", null, null, "30s",
            Duration.ofSeconds(30), Durations::parse, Applied.RESTART,
            "Once the upstreams failed to refresh an answer, how long it is served stale without asking them; 0 = ask each time.");
    public static final Setting<Boolean> CACHE_STALE_WHEN_LIMITED = one("cache.stale-when-limited", null, null, "true",
            true, Values::bool, Applied.RESTART, "A query over its domain's budget gets a stale cached answer, if any, before the action.");
    public static final Setting<Boolean> CACHE_PREFETCH = one("cache.prefetch", null, null, "false", false, Values::bool,
            Applied.RESTART, "A hit in the last tenth of a popular answer's lifetime asks the upstream again, so it does not expire.");
    public static final Setting<Integer> CACHE_NETWORKS_PER_QUESTION = one("cache.networks-per-question", null, null,
            "100", 100, v -> Values.integer(v, 1, 100_000), Applied.RESTART,
            "Answers one question (name, type, class, flags, UDP size) keeps for Client Subnet networks at most,"
                    + " rounded up to a multiple of 8 (as Unbound's max-ecs-tree-size-ipv4/-ipv6); past it, a network's"
                    + " answer takes the room of another network's.");
    public static final Setting<Path> PUBLIC_SUFFIX_LIST = one("public-suffix-list", "--public-suffix-list", "FILE",
            "Guava's", null, SettingTable::readable, Applied.RESTART,
            "A public_suffix_list.dat to use instead of the one in Guava.");
    public static final Setting<InetSocketAddress> METRICS = one("metrics", "--metrics", "HOST:PORT", "off", null,
            v -> Values.address(v, 9153, true), Applied.RESTART,
            "Serve counters at http://HOST:PORT/metrics (Prometheus text).");
    public static final Setting<Path> DNSTAP_SOCKET = one("dnstap.socket", "--dnstap-socket", "PATH", "off", null,
            SettingTable::socketPath, Applied.DNSTAP,
            "Write dnstap (clients' queries and answers, queries to upstreams and their replies) in Frame Streams to"
                    + " a reader's unix socket (dnstap -u, fstrm_capture); reconnects when the reader comes back.");
    public static final Setting<String> DNSTAP_IDENTITY = one("dnstap.identity", null, null, "the host's name", null,
            SettingTable::text, Applied.DNSTAP, "The identity every dnstap message carries.");
    public static final Setting<String> DNSTAP_VERSION = one("dnstap.version", null, null, "sluice VERSION", null,
            SettingTable::text, Applied.DNSTAP, "The version every dnstap message carries.");
    public static final Setting<List<DnstapSettings.Message>> DNSTAP_MESSAGES = list("dnstap.messages", null, null,
            "all four", List.of(DnstapSettings.Message.values()), SettingTable::dnstapMessages, Applied.DNSTAP,
            "Which messages are written: client-query, client-response, forwarder-query, forwarder-response.");
    public static final Setting<Integer> DNSTAP_QUEUE_SIZE = one("dnstap.queue-size", null, null, "16384", 16_384,
            v -> Values.integer(v, 64, 1 << 22), Applied.RESTART,
            "dnstap messages waiting for the reader at most; past it (a slow reader, or none) they are dropped and"
                    + " counted in dnstap_dropped, never a query.");
    public static final Setting<String> LOG_LEVEL = one("log-level", "--log-level", "LEVEL", "info", null,
            v -> Values.named(v, LogLevelName.values()).toString(), Applied.LOG_LEVEL,
            "error, warn, info, debug or trace; a reload applies it. Unset: SLUICE_LOG_LEVEL, else info.");
    public static final Setting<InetSocketAddress> ADMIN = one("admin.listen", "--admin", "HOST:PORT", "off", null,
            SettingTable::adminAddress, Applied.RESTART,
            "Serve the admin API, /metrics and the dashboard at http://HOST:PORT/ (a bare PORT is on 127.0.0.1).");
    public static final Setting<Path> ADMIN_TOKEN_FILE = one("admin.token-file", "--admin-token-file", "FILE", "none",
            null, SettingTable::readable, Applied.RESTART,
            "A file holding the bearer token every admin request but /healthz must carry; needed off loopback.");
    public static final Setting<BackendSettings.Kind> BACKEND = one("backend", "--backend", "NAME", "memory",
            BackendSettings.Kind.MEMORY, v -> Values.named(v, BackendSettings.Kind.values()), Applied.RESTART,
            "Where counters live: memory | redis | chronicle.");
    public static final Setting<URI> REDIS = one("redis", "--redis", "URI", "redis://127.0.0.1:6379",
            URI.create("redis://127.0.0.1:6379"), SettingTable::redisUri, Applied.RESTART,
            "redis://host:port[/db] or rediss:// (TLS).");
    public static final Setting<List<String>> REDIS_CLUSTER = list("redis-cluster", "--redis-cluster", "h:p,...",
            "none", List.of(), SettingTable::seeds, Applied.RESTART,
            "Seed nodes of a Redis Cluster, instead of --redis; comma-separated or repeated.");
    public static final Setting<BackendSettings.RedisMode> REDIS_MODE = one("redis-mode", "--redis-mode", "NAME",
            "exact", BackendSettings.RedisMode.EXACT, v -> Values.named(v, BackendSettings.RedisMode.values()), Applied.RESTART,
            "exact (each decision asks Redis) | async (local, synced).");
    public static final Setting<Duration> REDIS_TIMEOUT = one("redis-timeout", "--redis-timeout", "DURATION", "50ms",
            Duration.ofMillis(50), SettingTable::positiveDuration, Applied.RESTART,
            "Longest a query waits on Redis (its calls, rounds lost to other instances) before --redis-failure decides it.");
    public static final Setting<BackendSettings.RedisFailure> REDIS_FAILURE = one("redis-failure", "--redis-failure",
            "NAME", "local", BackendSettings.RedisFailure.LOCAL,
            v -> Values.named(v, BackendSettings.RedisFailure.values()), Applied.RESTART,
            "While Redis is slow or away: local | open | closed.");
    public static final Setting<Duration> SYNC_INTERVAL = one("sync-interval", "--sync-interval", "DURATION", "50ms",
            Duration.ofMillis(50), SettingTable::positiveDuration, Applied.RESTART,
            "Async mode: how often counts are synced with Redis.");
    public static final Setting<Path> STATE_FILE = one("state-file", "--state-file", "PATH", "./sluice-counters.dat",
            Path.of("./sluice-counters.dat"), v -> Path.of(v.trim()), Applied.RESTART,
            "The Chronicle Map file of --backend chronicle.");
    public static final Setting<Boolean> RESET_CORRUPT_STATE_FILE = one("reset-corrupt-state-file",
            "--reset-corrupt-state-file", null, "off", false, Values::bool, Applied.RESTART,
            "If the state file cannot be read, move it aside and start a fresh one (else exit 2).");

    /** The modules' sections, in the order their services file names them. */
    public static final List<SettingSection> SECTIONS = sections();

    /** Every setting: the server's in declaration order, then each section's. */
    public static final List<Setting<?>> ALL = Collections.unmodifiableList(new ArrayList<>(BY_KEY.values()));

    private static List<SettingSection> sections() {
        List<SettingSection> sections = new ArrayList<>();
        for (SettingSection section : ServiceLoader.load(SettingSection.class, SettingTable.class.getClassLoader())) {
            section.settings().forEach(SettingTable::add);
            sections.add(section);
        }
        return List.copyOf(sections);
    }

    /** The setting of {@code key}, or null. */
    public static Setting<?> byKey(String key) {
        return BY_KEY.get(key);
    }

    private static <T> Setting<T> one(String key, String flag, String label, String defaultText, T defaultValue,
                                      Setting.One<T> parser, Applied applied, String help) {
        return add(Setting.one(key, flag, label, defaultText, defaultValue, parser, applied, help));
    }

    private static <T> Setting<T> list(String key, String flag, String label, String defaultText, T defaultValue,
                                       Setting.Parser<T> parser, Applied applied, String help) {
        return add(Setting.list(key, flag, label, defaultText, defaultValue, parser, applied, help));
    }

    private static <T> Setting<T> add(Setting<T> s) {
        if (BY_KEY.putIfAbsent(s.key(), s) != null) {
            throw new IllegalStateException(s.key() + " is declared twice");
        }
        return s;
    }

    /** The levels of {@link #LOG_LEVEL}, as logback names them. */
    enum LogLevelName {
        ERROR, WARN, INFO, DEBUG, TRACE;

        @Override
        public String toString() {
            return Values.configName(this);
        }
    }

    /** {@code n}, when a multiple of {@code step} (reverse names have a label per octet, or per nibble). */
    static int multiple(int n, int step) throws ConfigException {
        if (n % step != 0) {
            throw new ConfigException(n + " is not a multiple of " + step + " (a reverse name has a label per "
                    + (step == 8 ? "octet" : "nibble") + ")");
        }
        return n;
    }

    /** Domain names as queries carry them ({@link Values#asciiDomain}), each once. */
    static List<String> domainNames(List<String> values) throws ConfigException {
        List<String> out = new ArrayList<>();
        for (String v : values) {
            String d = Values.asciiDomain(v);
            if (!out.contains(d)) {
                out.add(d);
            }
        }
        return List.copyOf(out);
    }

    /** {@code HOST:PORT}, or a bare {@code PORT} (or {@code :PORT}) on loopback. */
    static InetSocketAddress adminAddress(String text) throws ConfigException {
        String t = text.trim();
        if (t.matches(":?[0-9]+")) {
            t = "127.0.0.1:" + t.replace(":", "");
        }
        return Values.address(t, 8053, true);
    }

    /** A duration longer than 0 (every duration setting, and an override's window). */
    static Duration positiveDuration(String text) throws ConfigException {
        Duration d = Durations.parse(text);
        if (d.isZero()) {
            throw new ConfigException("must be longer than 0");
        }
        return d;
    }

    /** Addresses to listen on, {@code defaultPort} where a value has none; at least one. */
    public static List<InetSocketAddress> addresses(List<String> values, int defaultPort, boolean literal)
            throws ConfigException {
        if (values.isEmpty()) {
            throw new ConfigException("needs at least one address");
        }
        List<InetSocketAddress> out = new ArrayList<>();
        for (String v : values) {
            out.add(Values.address(v, defaultPort, literal));
        }
        return List.copyOf(out);
    }

    private static List<UpstreamAddress> upstreams(List<String> values) throws ConfigException {
        if (values.isEmpty()) {
            throw new ConfigException("needs at least one address");
        }
        List<UpstreamAddress> out = new ArrayList<>();
        for (String v : values) {
            out.add(UpstreamAddress.parse(v));
        }
        return List.copyOf(out);
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
        return List.copyOf(out);
    }

    private static List<Network> networks(List<String> values) throws ConfigException {
        List<Network> out = new ArrayList<>();
        for (String v : values) {
            out.add(Network.parse(v));
        }
        return List.copyOf(out);
    }

    /** What a query from outside allow-clients gets; each prints as its configuration name. */
    public enum AclAction {
        REFUSED, DROP;

        @Override
        public String toString() {
            return Values.configName(this);
        }
    }

    /** Networks, at least one: an empty allow-clients would refuse everyone, unsaid. */
    private static List<Network> someNetworks(List<String> values) throws ConfigException {
        if (values.isEmpty()) {
            throw new ConfigException("needs at least one network (0.0.0.0/0 and ::/0 allow everyone)");
        }
        return networks(values);
    }

    private static List<Network> networksOf(String... cidrs) {
        try {
            return networks(List.of(cidrs));
        } catch (ConfigException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static List<DnstapSettings.Message> dnstapMessages(List<String> values) throws ConfigException {
        List<DnstapSettings.Message> out = new ArrayList<>();
        for (String v : values) {
            DnstapSettings.Message m = Values.named(v, DnstapSettings.Message.values());
            if (!out.contains(m)) {
                out.add(m);
            }
        }
        return List.copyOf(out);
    }

    /** A unix socket's path, which need not exist yet: the reader may come later. */
    private static Path socketPath(String value) throws ConfigException {
        if (value.isBlank()) {
            throw new ConfigException("needs a path");
        }
        return Path.of(value.trim());
    }

    private static String text(String value) throws ConfigException {
        if (value.isBlank()) {
            throw new ConfigException("needs a value");
        }
        return value.trim();
    }

    /** A path to a file this process can read. */
    public static Path readable(String value) throws ConfigException {
        Path p = Path.of(value.trim());
        if (!Files.isReadable(p)) {
            throw new ConfigException("cannot read '" + value + "'");
        }
        return p;
    }
}
