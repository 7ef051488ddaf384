package io.sluice.dot;

import io.sluice.config.Settings;
import io.sluice.frontend.Frontend;
import io.sluice.transport.ServerTls;
import io.sluice.transport.SocketProtocol;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * DNS over TLS (RFC 7858) as a front end: it binds {@code tls-listen} through the frontend's TLS
 * listeners (the TCP bounds, the PROXY header, the certificate shared with DNS over HTTPS), and
 * each connection carries DNS messages framed as over TCP, answered by the same connection
 * handling ({@link Frontend#dnsMessages}).
 */
public final class DnsOverTls {
    private DnsOverTls() {
    }

    /**
     * Binds {@code settings}' tls-listen addresses; they read from the frontend's start of reading on.
     *
     * @return the addresses bound, ports resolved; empty without tls-listen
     */
    public static List<InetSocketAddress> bind(Settings settings, Frontend frontend)
            throws BindException, InterruptedException {
        return frontend.bindTls(settings.value(DotSettings.TLS_LISTEN), SocketProtocol.DOT.label(), true, ServerTls.Contexts::dot,
                frontend.dnsMessages(SocketProtocol.DOT));
    }
}
