package io.sluice.transport;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.nio.file.Path;
import javax.net.ssl.SSLException;

/**
 * DNS over TLS (RFC 7858) on the client side of sluice: the server's certificate chain and private
 * key, read from PEM files (a chain as certbot writes {@code fullchain.pem}, a PKCS#8 key as
 * {@code privkey.pem}), as the context every new TLS connection takes its handler from. TLS 1.2
 * and 1.3 only (RFC 8996 deprecates the older ones), the JDK's provider.
 */
public final class ServerTls {
    private ServerTls() {
    }

    /** The context for {@code certificateChain} and {@code privateKey}; what is wrong with them, else. */
    public static SslContext load(Path certificateChain, Path privateKey) throws SSLException {
        try {
            return SslContextBuilder.forServer(certificateChain.toFile(), privateKey.toFile())
                    .protocols("TLSv1.3", "TLSv1.2")
                    .build();
        } catch (IllegalArgumentException e) { // Netty's word for a file it cannot read as PEM
            throw new SSLException(e.getMessage(), e);
        }
    }
}
