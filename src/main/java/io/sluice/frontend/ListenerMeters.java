package io.sluice.frontend;

import io.sluice.metrics.Registry;
import io.sluice.transport.SocketProtocol;
import java.util.concurrent.atomic.LongAdder;

/** What the listeners count, shared by every socket and connection. */
final class ListenerMeters {
    final LongAdder queriesUdp;
    final LongAdder queriesTcp;
    final LongAdder tcpConnectionsRejected;
    final LongAdder tcpIdleClosed;
    final LongAdder tcpClientLimitRejected;
    final LongAdder tcpRateRejected;
    final LongAdder ioErrors;
    final LongAdder aclDenied;
    final LongAdder proxyHeaderInvalid;
    final LongAdder tlsHandshakeFailed;
    private final Registry registry;

    ListenerMeters(Registry r) {
        this.registry = r;
        for (SocketProtocol p : SocketProtocol.values()) {
            queries(p.label()); // every protocol's series exists, 0 where it is not served
        }
        queriesUdp = queries(SocketProtocol.UDP.label());
        queriesTcp = queries(SocketProtocol.TCP.label());
        tcpConnectionsRejected = r.counter("tcp_connections_rejected", "Client connections closed past max-tcp-connections.");
        tcpIdleClosed = r.counter("tcp_idle_closed", "Client connections closed after tcp-idle-timeout.");
        tcpClientLimitRejected = r.counter("tcp_client_limit_rejected",
                "Client connections closed past max-tcp-connections-per-client.");
        tcpRateRejected = r.counter("tcp_connection_rate_rejected",
                "Client TCP and TLS connections closed past tcp-connection-rate-per-client.");
        ioErrors = r.ioErrors();
        aclDenied = r.counter("acl_denied", "Queries (and TCP connections) from clients outside allow-clients.");
        tlsHandshakeFailed = r.counter("tls_handshakes_failed",
                "TLS connections closed because their handshake failed: not TLS, no common version or cipher, cut short.");
        proxyHeaderInvalid = r.counter("proxy_header_invalid",
                "Datagrams dropped and TCP connections closed from proxy-protocol-from sources for want of a valid"
                        + " PROXY v2 header.");
    }

    /** The queries read over {@code protocol}, as {@code queries{protocol}} names it. */
    LongAdder queries(String protocol) {
        return registry.counter("queries", "Messages read from clients: datagrams, messages on TCP and TLS connections,"
                + " DNS over HTTPS requests.", "protocol", protocol);
    }
}
