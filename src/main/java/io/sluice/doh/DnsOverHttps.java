package io.sluice.doh;

import io.sluice.config.Settings;
import io.sluice.frontend.Frontend;
import io.sluice.transport.ServerTls;
import io.sluice.transport.SocketProtocol;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * DNS over HTTPS as a front end: it binds {@code https-listen} through the frontend's TLS
 * listeners (the TCP bounds, the PROXY header, the certificate shared with DNS over TLS, offered
 * with ALPN h2 and http/1.1) and speaks HTTP on each connection ({@link DohConnection}).
 */
public final class DnsOverHttps {
    private DnsOverHttps() {
    }

    /**
     * Binds {@code settings}' https-listen addresses; they read from the frontend's start of reading on.
     *
     * @return the addresses bound, ports resolved; empty without https-listen
     */
    public static List<InetSocketAddress> bind(Settings settings, Frontend frontend)
            throws BindException, InterruptedException {
        return frontend.bindTls(settings.value(DohSettings.HTTPS_LISTEN), SocketProtocol.DOH.label(), false, ServerTls.Contexts::https,
                (ch, pipeline, bounds, proxied, meters) ->
                        DohConnection.addTo(ch, pipeline, meters, bounds, proxied)::stop);
    }
}
