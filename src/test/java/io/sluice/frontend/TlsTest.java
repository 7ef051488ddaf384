package io.sluice.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.config.ConfigException;
import io.sluice.config.Settings;
import io.sluice.limit.ManualClock;
import io.sluice.testing.Dns;
import io.sluice.testing.ProxyV2;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestCertificates;
import io.sluice.testing.TestUpstream;
import io.sluice.transport.ServerTls;
import io.sluice.transport.SocketProtocol;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/**
 * DNS over TLS (RFC 7858) over real sockets: certificates made by openssl for the test, a JDK TLS
 * client that trusts only them, queries framed as over TCP.
 */
class TlsTest {
    @TempDir
    Path dir;

    @Test
    void queriesOverTlsAreAnsweredOnOneConnection() throws Exception {
        Path[] files = certificate("first");
        try (TestUpstream up = new TestUpstream(); RunningSluice s = servingTls(up, files);
             SSLSocket c = connect(s.sluice().addresses(SocketProtocol.DOT).get(0), files[0])) {
            assertEquals("dot", c.getApplicationProtocol(), "ALPN: the client offered dot");
            Dns.writeFrame(c, Dns.query(1, "one.example.", Type.A));
            Dns.writeFrame(c, Dns.query(2, "two.example.", Type.A));
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.readFrame(c)));
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.readFrame(c)));
            assertEquals(2, s.sluice().metrics().count("queries", "protocol", "tls"));
            if (System.getProperty("os.arch").equals("amd64")) {
                assertEquals("BoringSSL", ServerTls.provider(), "the native library the jar carries loads here");
            }
            assertEquals(0, s.sluice().metrics().count("queries", "protocol", "tcp"));
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(3, "udp.example.", Type.A))),
                    "the plain listeners serve as ever");
        }
    }

    @Test
    void plainDnsOnTheTlsPortIsClosed() throws Exception {
        Path[] files = certificate("first");
        try (TestUpstream up = new TestUpstream(); RunningSluice s = servingTls(up, files);
             Socket plain = new Socket(s.sluice().addresses(SocketProtocol.DOT).get(0).getAddress(),
                     s.sluice().addresses(SocketProtocol.DOT).get(0).getPort())) {
            plain.setSoTimeout(5000);
            Dns.writeFrame(plain, Dns.query(1, "plain.example.", Type.A));
            assertEquals(-1, plain.getInputStream().read(), "not a TLS record: closed, nothing answered");
            assertEquals(1, s.sluice().metrics().count("tls_handshakes_failed"));
            assertEquals(0, up.tcpQueries() + up.udpQueries());
        }
    }

    @Test
    void aReloadReadsARenewedCertificateForNewConnections() throws Exception {
        Path[] files = certificate("first");
        Path conf = Files.writeString(dir.resolve("sluice.yml"), "tls-listen: [127.0.0.1:0]\ntls-cert-file: "
                + files[0] + "\ntls-key-file: " + files[1] + "\n");
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), new ManualClock(), b -> b.configFile(conf))) {
            InetSocketAddress at = s.sluice().addresses(SocketProtocol.DOT).get(0);
            try (SSLSocket c = connect(at, files[0])) {
                assertEquals("CN=first", served(c));
                assertEquals(notAfter(c), expiryGauge(s), "the served certificate's expiry");
            }
            TestCertificates.selfSigned(dir, "second", 3); // renewed in place, as certbot does, valid a day longer
            assertEquals(List.of("tls-cert-file: read again, for new TLS connections"), s.sluice().reload());
            try (SSLSocket c = connect(at, files[0])) {
                assertEquals("CN=second", served(c));
                assertEquals(notAfter(c), expiryGauge(s), "the renewed certificate's expiry");
                Dns.writeFrame(c, Dns.query(1, "renewed.example.", Type.A));
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.readFrame(c)));
            }
            Files.writeString(files[1], "not a key\n");
            ConfigException e = assertThrows(ConfigException.class, () -> s.sluice().reload());
            assertTrue(e.getMessage().contains("sluice.yml line 3: tls-key-file: not a certificate chain and private key"),
                    "names the file, line and key: " + e.getMessage());
            try (SSLSocket c = connect(at, files[0])) {
                assertEquals("CN=second", served(c), "a failed reload changes nothing");
            }
        }
    }

    /** A proxy's header comes first, then the TLS handshake, as HAProxy's send-proxy-v2 in front of a DoT server. */
    @Test
    void aProxysHeaderComesBeforeTheHandshake() throws Exception {
        Path[] files = certificate("first");
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), b -> {
                 b.set("tls-listen", List.of("127.0.0.1:0"));
                 b.set("tls-cert-file", List.of(files[0].toString()));
                 b.set("tls-key-file", List.of(files[1].toString()));
                 b.set("allow-clients", List.of("10.0.0.0/8"));
                 b.set("proxy-protocol-from", List.of("127.0.0.1/32"));
             })) {
            InetSocketAddress at = s.sluice().addresses(SocketProtocol.DOT).get(0);
            for (String client : List.of("10.1.2.3", "192.0.2.7")) {
                try (Socket tcp = new Socket(at.getAddress(), at.getPort())) {
                    tcp.getOutputStream().write(ProxyV2.proxied(client, ProxyV2.TCP, new byte[0]));
                    try (SSLSocket c = (SSLSocket) trusting(files[0]).getSocketFactory()
                            .createSocket(tcp, at.getHostString(), at.getPort(), true)) {
                        c.setSoTimeout(5000);
                        c.startHandshake();
                        Dns.writeFrame(c, Dns.query(1, "proxied.example.", Type.A));
                        assertEquals(client.startsWith("10.") ? Rcode.NOERROR : Rcode.REFUSED, Dns.rcode(Dns.readFrame(c)),
                                "judged as " + client);
                    }
                }
            }
        }
    }

    @Test
    void whatTlsNeedsIsSaidNamingTheKeys() throws Exception {
        ConfigException none = assertThrows(ConfigException.class, () -> settings("tls-listen", "127.0.0.1:853"));
        assertEquals("tls-listen: needs tls-cert-file and tls-key-file", none.getMessage());
        Path junk = Files.writeString(dir.resolve("junk.pem"), "junk\n");
        ConfigException bad = assertThrows(ConfigException.class, () -> settings("tls-listen", "127.0.0.1:853",
                "tls-cert-file", junk.toString(), "tls-key-file", junk.toString()));
        assertTrue(bad.getMessage().startsWith("tls-cert-file, tls-key-file: not a certificate chain"), bad.getMessage());
        Path[] files = certificate("first");
        ConfigException shared = assertThrows(ConfigException.class, () -> settings("listen", "127.0.0.1:1053",
                "tls-listen", "127.0.0.1:1053", "tls-cert-file", files[0].toString(), "tls-key-file", files[1].toString()));
        assertTrue(shared.getMessage().contains("a port of its own"), shared.getMessage());
    }

    private static Settings settings(String... keyValues) throws ConfigException {
        Settings.Builder b = new Settings.Builder();
        b.set("upstreams", List.of("127.0.0.1:53"));
        for (int i = 0; i < keyValues.length; i += 2) {
            b.set(keyValues[i], List.of(keyValues[i + 1]));
        }
        return b.build();
    }

    /** sluice in front of {@code up}, serving TLS on a port of its own with the certificate and key {@code files}. */
    private static RunningSluice servingTls(TestUpstream up, Path[] files) throws Exception {
        return RunningSluice.start(List.of(up), "tls-listen", "127.0.0.1:0",
                "tls-cert-file", files[0].toString(), "tls-key-file", files[1].toString());
    }

    private Path[] certificate(String cn) throws Exception {
        return TestCertificates.selfSigned(dir, cn);
    }

    /** A TLS connection to {@code at} that trusts only the certificate in {@code cert}. */
    private static SSLSocket connect(InetSocketAddress at, Path cert) throws Exception {
        SSLSocket s = (SSLSocket) trusting(cert).getSocketFactory().createSocket(at.getAddress(), at.getPort());
        SSLParameters offer = s.getSSLParameters();
        offer.setApplicationProtocols(new String[] {"dot"});
        s.setSSLParameters(offer);
        s.setSoTimeout(5000);
        s.startHandshake();
        return s;
    }

    /** A TLS client context that trusts only the certificate in {@code cert}. */
    private static SSLContext trusting(Path cert) throws Exception {
        KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
        trusted.load(null, null);
        try (InputStream in = Files.newInputStream(cert)) {
            trusted.setCertificateEntry("sluice", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trusted);
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(null, tmf.getTrustManagers(), null);
        return tls;
    }

    /** The gauge of the served certificate's expiry, as /metrics shows it. */
    private static long expiryGauge(RunningSluice s) {
        for (String line : s.sluice().metricsText().split("\n")) {
            if (line.startsWith("sluice_tls_certificate_expiry_timestamp_seconds ")) {
                return (long) Double.parseDouble(line.substring(line.indexOf(' ') + 1));
            }
        }
        throw new AssertionError("no expiry gauge in /metrics");
    }

    private static long notAfter(SSLSocket c) throws Exception {
        return ((X509Certificate) c.getSession().getPeerCertificates()[0]).getNotAfter().getTime() / 1000;
    }

    private static String served(SSLSocket c) throws Exception {
        return ((X509Certificate) c.getSession().getPeerCertificates()[0]).getSubjectX500Principal().getName();
    }
}
