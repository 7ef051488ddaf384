package io.sluice.config;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.xbill.DNS.ResolverConfig;

/**
 * Everything sluice runs with, validated. Built by {@link Builder} from the YAML file, then flags.
 * The keys, defaults and meanings are documented in {@code conf/sluice.yml}.
 *
 * @param listen              addresses served over UDP and TCP
 * @param upstreams           resolvers, tried in order
 * @param threads             event-loop threads
 * @param timeout             wait for one upstream before trying the next
 * @param maxInflight         queries waiting on upstreams at once, over all threads
 * @param maxTcpConnections   client TCP connections at once
 * @param tcpIdleTimeout      a client TCP connection with no query for this long is closed
 * @param upstreamSockets     UDP sockets (source ports) per thread for upstream queries
 * @param maxFails            consecutive timeouts after which an upstream is marked down
 * @param healthCheckInterval how often a down upstream is probed
 */
public record Settings(
        List<InetSocketAddress> listen,
        List<InetSocketAddress> upstreams,
        int threads,
        Duration timeout,
        int maxInflight,
        int maxTcpConnections,
        Duration tcpIdleTimeout,
        int upstreamSockets,
        int maxFails,
        Duration healthCheckInterval) {

    public static final int DEFAULT_PORT = 5353;
    public static final int UPSTREAM_DEFAULT_PORT = 53;

    public Settings {
        listen = List.copyOf(listen);
        upstreams = List.copyOf(upstreams);
    }

    /** Collects settings by key, each value checked as it arrives; the last value for a key wins. */
    public static final class Builder {
        private List<InetSocketAddress> listen = List.of();
        private List<InetSocketAddress> upstreams = List.of();
        private int threads = Runtime.getRuntime().availableProcessors();
        private Duration timeout = Duration.ofSeconds(2);
        private int maxInflight = 65_536;
        private int maxTcpConnections = 1_000;
        private Duration tcpIdleTimeout = Duration.ofSeconds(10);
        private int upstreamSockets = 8;
        private int maxFails = 3;
        private Duration healthCheckInterval = Duration.ofSeconds(1);

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
                case "max-inflight" -> maxInflight = Values.integer(one(values), 1, 1_000_000);
                case "max-tcp-connections" -> maxTcpConnections = Values.integer(one(values), 1, 1_000_000);
                case "tcp-idle-timeout" -> tcpIdleTimeout = positive(Values.duration(one(values)));
                case "upstream-sockets" -> upstreamSockets = Values.integer(one(values), 1, 256);
                case "max-fails" -> maxFails = Values.integer(one(values), 1, 1_000_000);
                case "health-check-interval" -> healthCheckInterval = positive(Values.duration(one(values)));
                default -> throw new ConfigException("unknown setting");
            }
            return this;
        }

        /** Validates what depends on several keys and fills in the upstreams from resolv.conf. */
        public Settings build() throws ConfigException {
            List<InetSocketAddress> l = listen.isEmpty()
                    ? List.of(new InetSocketAddress("127.0.0.1", DEFAULT_PORT)) : listen;
            List<InetSocketAddress> u = upstreams.isEmpty() ? systemResolvers() : upstreams;
            return new Settings(l, u, threads, timeout, maxInflight, maxTcpConnections, tcpIdleTimeout,
                    upstreamSockets, maxFails, healthCheckInterval);
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
