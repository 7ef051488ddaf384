package io.sluice.transport;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.util.Collection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

/**
 * DNS over TLS toward upstreams (RFC 7858, the strict profile of RFC 8310): the certificates a
 * {@code tls://} upstream's must chain to, the JDK's trust store or {@code upstream-tls-ca-file},
 * and the check that it names the upstream (the {@code #NAME} of its address, else the address).
 * A connection that fails either is closed before a query is written on it. TLS 1.2 and 1.3 only.
 *
 * <p>One set of trust anchors makes both ends that talk to upstreams: the event loops' Netty
 * handlers (BoringSSL where it loads, as for the listeners: {@link ServerTls}) and the health
 * prober's blocking JDK sockets.
 */
public final class UpstreamTls {
    private static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};
    /** What makes a certificate name its server: the name or address checks of RFC 2818 and 6125. */
    private static final String NAME_CHECK = "HTTPS";

    private final SslContext handlers;
    private final SSLContext probes;

    private UpstreamTls(SslContext handlers, SSLContext probes) {
        this.handlers = handlers;
        this.probes = probes;
    }

    /**
     * The anchors of {@code caFile} (PEM certificates), or of the JDK's trust store when it is
     * null; what is wrong with them, else.
     */
    public static UpstreamTls load(Path caFile) throws GeneralSecurityException {
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(caFile == null ? null : anchors(caFile));
        try {
            SslContext handlers = SslContextBuilder.forClient()
                    .sslProvider(OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK)
                    .protocols(PROTOCOLS)
                    .trustManager(trust)
                    .endpointIdentificationAlgorithm(NAME_CHECK)
                    .build();
            SSLContext probes = SSLContext.getInstance("TLS");
            probes.init(null, trust.getTrustManagers(), null);
            return new UpstreamTls(handlers, probes);
        } catch (IOException e) {
            throw new GeneralSecurityException(e.getMessage(), e);
        }
    }

    private static KeyStore anchors(Path caFile) throws GeneralSecurityException {
        Collection<? extends Certificate> certificates;
        try (InputStream in = Files.newInputStream(caFile)) {
            certificates = CertificateFactory.getInstance("X.509").generateCertificates(in);
        } catch (IOException e) {
            throw new GeneralSecurityException("cannot read " + caFile + ": " + e.getMessage(), e);
        } catch (CertificateException e) {
            throw new GeneralSecurityException("no PEM certificate in " + caFile + ": " + e.getMessage(), e);
        }
        if (certificates.isEmpty()) {
            throw new GeneralSecurityException("no PEM certificate in " + caFile);
        }
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        try {
            store.load(null, null);
        } catch (IOException e) {
            throw new GeneralSecurityException(e.getMessage(), e);
        }
        int i = 0;
        for (Certificate c : certificates) {
            store.setCertificateEntry("anchor-" + i++, c);
        }
        return store;
    }

    /**
     * The handler that makes a new connection to {@code upstream} TLS, checking that its
     * certificate names {@code name} (sent as SNI too, unless an address); the handshake fails
     * after {@code handshakeMillis}.
     */
    public SslHandler handler(ByteBufAllocator alloc, String name, InetSocketAddress upstream, long handshakeMillis) {
        SslHandler h = handlers.newHandler(alloc, name, upstream.getPort());
        h.setHandshakeTimeoutMillis(handshakeMillis);
        h.setWrapDataSize(0); // a record per write, not one for all a flush holds: TcpFraming.addOneRecordEachTo
        return h;
    }

    /**
     * A TLS connection to {@code upstream} whose certificate names {@code name}, handshake done,
     * each read waiting at most {@code timeoutMillis}: the health prober's, blocking.
     */
    public SSLSocket connect(String name, InetSocketAddress upstream, int timeoutMillis) throws IOException {
        Socket plain = new Socket();
        try {
            plain.connect(upstream, timeoutMillis);
            plain.setSoTimeout(timeoutMillis);
            SSLSocket s = (SSLSocket) probes.getSocketFactory().createSocket(plain, name, upstream.getPort(), true);
            SSLParameters p = s.getSSLParameters();
            p.setProtocols(PROTOCOLS);
            p.setEndpointIdentificationAlgorithm(NAME_CHECK);
            s.setSSLParameters(p);
            s.startHandshake();
            return s;
        } catch (IOException | RuntimeException e) {
            plain.close();
            throw e;
        }
    }
}
