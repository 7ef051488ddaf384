package io.sluice.transport;

import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLException;

/**
 * DNS over TLS (RFC 7858) and over HTTPS (RFC 8484) on the client side of sluice: the server's certificate chain and private
 * key, read from PEM files (a chain as certbot writes {@code fullchain.pem}, a PKCS#8 key as
 * {@code privkey.pem}), as the context every new TLS connection takes its handler from. TLS 1.2
 * and 1.3 only (RFC 8996 deprecates the older ones).
 *
 * <p>BoringSSL (Netty's tcnative) where its native library loads, the JDK's provider elsewhere.
 * The handshakes are the difference: with an EC P-256 certificate, BoringSSL's take a fraction of
 * the JDK's CPU, so a handshake flood delays the loop's other queries (UDP among them) far less
 * (docs/benchmarks.md, "DNS over TLS"); queries on open connections cost about the same.
 */
public final class ServerTls {
    private ServerTls() {
    }

    /**
     * ALPN "dot" (RFC 7858's registration, which SVCB records for DNS name, RFC 9461) for a client
     * that offers it; a client that offers none, or only others, goes on without.
     */
    private static final ApplicationProtocolConfig DOT_ALPN = new ApplicationProtocolConfig(
            ApplicationProtocolConfig.Protocol.ALPN,
            ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
            ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT, "dot");

    /** Which TLS implementation serves: "BoringSSL" or "JDK". */
    public static String provider() {
        return OpenSsl.isAvailable() ? "BoringSSL" : "JDK";
    }

    /**
     * When the first certificate of {@code certificateChain} (the server's own) expires, in
     * seconds since the epoch: what an operator watches to catch a renewal that did not happen.
     */
    public static long expiresAt(Path certificateChain) throws SSLException {
        try (InputStream in = Files.newInputStream(certificateChain)) {
            X509Certificate c = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
            return c.getNotAfter().getTime() / 1000;
        } catch (IOException | CertificateException | ClassCastException e) {
            throw new SSLException("no certificate in " + certificateChain + ": " + e.getMessage(), e);
        }
    }

    /** What {@link #load} found wrong, for a line that names the two keys before it. */
    public static String whatIsWrong(SSLException e) {
        return "not a certificate chain and private key in PEM: " + e.getMessage();
    }

    /**
     * ALPN for DNS over HTTPS: "h2" for a client that offers it, else "http/1.1" (RFC 8484 section
     * 5.2 recommends HTTP/2; curl and older stacks offer both, some only HTTP/1.1).
     */
    private static final ApplicationProtocolConfig DOH_ALPN = new ApplicationProtocolConfig(
            ApplicationProtocolConfig.Protocol.ALPN,
            ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
            ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
            ApplicationProtocolNames.HTTP_2, ApplicationProtocolNames.HTTP_1_1);

    /**
     * What the TLS listeners serve, read from one pair of files: the context of DNS over TLS, that
     * of DNS over HTTPS (the same certificate, another ALPN), and when the certificate expires
     * (seconds since the epoch). A reload reads the files again into a new one, put in force whole.
     */
    public record Contexts(SslContext dot, SslContext https, long expiresAt) {
        public static Contexts load(Path certificateChain, Path privateKey) throws SSLException {
            return new Contexts(ServerTls.load(certificateChain, privateKey, DOT_ALPN),
                    ServerTls.load(certificateChain, privateKey, DOH_ALPN), ServerTls.expiresAt(certificateChain));
        }
    }

    /** The DNS over TLS context for {@code certificateChain} and {@code privateKey}; what is wrong with them, else. */
    public static SslContext load(Path certificateChain, Path privateKey) throws SSLException {
        return load(certificateChain, privateKey, DOT_ALPN);
    }

    private static SslContext load(Path certificateChain, Path privateKey, ApplicationProtocolConfig alpn)
            throws SSLException {
        try {
            return SslContextBuilder.forServer(certificateChain.toFile(), privateKey.toFile())
                    .sslProvider(OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK)
                    .protocols("TLSv1.3", "TLSv1.2")
                    .applicationProtocolConfig(alpn)
                    .build();
        } catch (IllegalArgumentException e) { // Netty's word for a file it cannot read as PEM
            throw new SSLException(e.getMessage(), e);
        }
    }
}
