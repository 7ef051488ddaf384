package io.sluice.forward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.config.ConfigException;
import io.sluice.config.Settings;
import io.sluice.config.UpstreamAddress;
import io.sluice.limit.Clock;
import io.sluice.testing.Dns;
import io.sluice.testing.NsdServer;
import io.sluice.testing.Ports;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestCertificates;
import io.sluice.testing.TestUpstream;
import io.sluice.transport.SocketProtocol;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * Upstreams asked over TLS ({@code tls://}): a real nsd serving DNS over TLS with a certificate
 * openssl made for the test, trusted through {@code upstream-tls-ca-file}.
 */
class TlsUpstreamTest {
    @TempDir
    Path dir;

    @Test
    void udpAndTcpClientsAreAnsweredThroughTheTlsUpstream() throws Exception {
        Path[] files = TestCertificates.selfSigned(dir, "nsd");
        try (NsdServer nsd = NsdServer.startWithTls(dir, files[0], files[1]);
             RunningSluice s = overTls(nsd, "", files[0])) {
            Message udp = Dns.parse(Dns.udp(s.address(), Dns.query(1, "h001.diff.test.", Type.A)));
            assertEquals(Rcode.NOERROR, udp.getRcode());
            assertEquals("10.0.1.7", udp.getSection(Section.ANSWER).get(0).rdataToString());
            Message tcp = Dns.parse(Dns.tcp(s.address(), Dns.query(2, "h002.diff.test.", Type.A)));
            assertEquals("10.0.2.14", tcp.getSection(Section.ANSWER).get(0).rdataToString());
            String upstream = "tls://127.0.0.1:" + nsd.tlsAddress().getPort();
            assertEquals(upstream, s.sluice().upstreams().get(0).toString());
            assertEquals(0, s.sluice().metrics().count("upstream_tls_failures", "upstream", upstream));
        }
    }

    /**
     * Two queries that leave in one wake-up go as two TLS records: in one, nsd answers the first
     * and holds the second until more data comes, which here would be never.
     */
    @Test
    void twoQueriesSentTogetherAreBothAnswered() throws Exception {
        Path[] files = TestCertificates.selfSigned(dir, "nsd");
        try (NsdServer nsd = NsdServer.startWithTls(dir, files[0], files[1]);
             RunningSluice s = RunningSluice.startFor(List.of("tls://127.0.0.1:" + nsd.tlsAddress().getPort()),
                     Clock.system(), b -> { }, "upstream-tls-ca-file", files[0].toString(), "timeout", "10s",
                     "query-timeout", "10s", "threads", "1");
             Socket c = new Socket(s.address().getAddress(), s.address().getPort())) {
            c.setSoTimeout(5000);
            // one segment: read, and forwarded, in one wake-up
            c.getOutputStream().write(Dns.frames(Dns.query(1, "h001.diff.test.", Type.A),
                    Dns.query(2, "h002.diff.test.", Type.A)));
            assertEquals(Set.of(1, 2), Set.of(Dns.id(Dns.readFrame(c)), Dns.id(Dns.readFrame(c))));
        }
    }

    /** Over UDP nsd would have said TC itself; over TLS the whole answer comes, and sluice cuts it for the client. */
    @Test
    void anAnswerLargerThanAUdpClientTakesIsSentTruncated() throws Exception {
        Path[] files = TestCertificates.selfSigned(dir, "nsd");
        try (NsdServer nsd = NsdServer.startWithTls(dir, files[0], files[1]);
             RunningSluice s = overTls(nsd, "", files[0], "cache.size", "1000")) {
            for (int id : new int[] {7, 9}) { // the second from the cache, cut the same way
                Message udp = Dns.parse(Dns.udp(s.address(), Dns.query(id, "Big.diff.test.", Type.TXT)));
                assertTrue(udp.getHeader().getFlag(Flags.TC), "512 bytes without EDNS");
                assertTrue(udp.getHeader().getFlag(Flags.AA), "the upstream's header: nsd is authoritative");
                assertFalse(udp.getHeader().getFlag(Flags.RA), "the upstream's header: nsd does not recurse");
                assertEquals(id, udp.getHeader().getID());
                assertEquals("Big.diff.test.", udp.getQuestion().getName().toString(), "the client's question, its case");
                assertEquals(0, udp.getSection(Section.ANSWER).size());
            }
            assertEquals(1, s.sluice().metrics().count("upstream_answers_truncated"));
            assertEquals(1, s.sluice().metrics().count("cache_truncated"));
            Message tcp = Dns.parse(Dns.tcp(s.address(), Dns.query(8, "big.diff.test.", Type.TXT)));
            assertFalse(tcp.getHeader().getFlag(Flags.TC));
            assertTrue(tcp.getSection(Section.ANSWER).size() > 10, "over TCP, all of it");
        }
    }

    @Test
    void aCertificateThatDoesNotNameTheUpstreamFailsItsQueriesAtOnce() throws Exception {
        Path[] files = TestCertificates.selfSigned(dir, "nsd");
        try (NsdServer nsd = NsdServer.startWithTls(dir, files[0], files[1]);
             RunningSluice s = overTls(nsd, "#resolver.example", files[0])) {
            Message m = Dns.parse(Dns.udp(s.address(), Dns.query(1, "h001.diff.test.", Type.A)));
            assertEquals(Rcode.SERVFAIL, m.getRcode());
            String upstream = "tls://127.0.0.1:" + nsd.tlsAddress().getPort() + "#resolver.example";
            assertEquals(1, s.sluice().metrics().count("upstream_tls_failures", "upstream", upstream));
            assertEquals(0, s.sluice().metrics().count("upstream_timeouts", "upstream", upstream),
                    "failed at the handshake, not at the timeout");
        }
    }

    @Test
    void aSelfSignedCertificateIsNotTrustedByTheJdksStore() throws Exception {
        Path[] files = TestCertificates.selfSigned(dir, "nsd");
        try (NsdServer nsd = NsdServer.startWithTls(dir, files[0], files[1]);
             RunningSluice s = RunningSluice.startFor(List.of("tls://127.0.0.1:" + nsd.tlsAddress().getPort()),
                     Clock.system(), b -> { })) {
            Message m = Dns.parse(Dns.udp(s.address(), Dns.query(1, "h001.diff.test.", Type.A)));
            assertEquals(Rcode.SERVFAIL, m.getRcode());
        }
    }

    /** The prober asks over TLS too: an upstream down for want of a TLS server is up once one serves. */
    @Test
    void aDownTlsUpstreamIsProbedOverTlsAndComesBack() throws Exception {
        Path[] files = TestCertificates.selfSigned(dir, "sluice");
        int port = Ports.freeUdpAndTcp();
        try (TestUpstream behind = new TestUpstream();
             RunningSluice s = RunningSluice.startFor(List.of("tls://127.0.0.1:" + port), Clock.system(), b -> { },
                     "upstream-tls-ca-file", files[0].toString(), "max-fails", "1", "health-check-interval", "50ms")) {
            assertEquals(Rcode.SERVFAIL, Dns.rcode(Dns.udp(s.address(), Dns.query(1, "down.example.", Type.A))));
            assertTrue(s.sluice().upstreams().get(0).isDown(), "nothing listens: down after one failure");
            try (RunningSluice dot = RunningSluice.start(List.of(behind), "tls-listen", "127.0.0.1:" + port,
                    "tls-cert-file", files[0].toString(), "tls-key-file", files[1].toString())) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (s.sluice().upstreams().get(0).isDown() && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
                assertFalse(s.sluice().upstreams().get(0).isDown(), "the probe over TLS was answered");
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(2, "up.example.", Type.A))));
                assertTrue(behind.tcpQueries() >= 2, "the probe and the query went through the DoT server");
            }
        }
    }

    /** An upstream that closes an idle connection costs the next query a new handshake, not an answer. */
    @Test
    void aConnectionTheUpstreamClosedWhenIdleIsOpenedAgain() throws Exception {
        Path[] files = TestCertificates.selfSigned(dir, "sluice");
        try (TestUpstream behind = new TestUpstream();
             RunningSluice dot = RunningSluice.start(List.of(behind), "tls-listen", "127.0.0.1:0",
                     "tls-cert-file", files[0].toString(), "tls-key-file", files[1].toString(),
                     "tcp-idle-timeout", "100ms");
             RunningSluice s = RunningSluice.startFor(List.of("tls://127.0.0.1:"
                     + dot.sluice().addresses(SocketProtocol.DOT).get(0).getPort()), Clock.system(), b -> { },
                     "upstream-tls-ca-file", files[0].toString(), "threads", "1")) {
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(1, "before.example.", Type.A))));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (dot.sluice().metrics().count("tcp_idle_closed") == 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertEquals(1, dot.sluice().metrics().count("tcp_idle_closed"), "the upstream closed it");
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(2, "after.example.", Type.A))));
            assertEquals(0, s.sluice().metrics().count("servfail"));
            assertEquals(2, dot.sluice().metrics().count("queries", "protocol", "tls"));
        }
    }

    @Test
    void aBadTlsUpstreamOrTrustFileIsNamed() throws Exception {
        ConfigException scheme = assertThrows(ConfigException.class, () -> settings("upstreams", "https://9.9.9.9"));
        assertTrue(scheme.getMessage().contains("the only scheme is tls://"), scheme.getMessage());
        ConfigException name = assertThrows(ConfigException.class, () -> settings("upstreams", "tls://9.9.9.9#"));
        assertTrue(name.getMessage().contains("no name after '#'"), name.getMessage());
        Path junk = Files.writeString(dir.resolve("junk.pem"), "junk\n");
        ConfigException trust = assertThrows(ConfigException.class, () -> settings("upstreams", "tls://9.9.9.9",
                "upstream-tls-ca-file", junk.toString()));
        assertTrue(trust.getMessage().startsWith("upstream-tls-ca-file: no PEM certificate in " + junk),
                trust.getMessage());
        UpstreamAddress quad9 = settings("upstreams", "tls://[2620:fe::fe]#dns.quad9.net").upstreams().get(0);
        assertEquals(853, quad9.address().getPort());
        assertEquals("dns.quad9.net", quad9.tlsName());
        assertEquals("tls://9.9.9.9:853", settings("upstreams", "tls://9.9.9.9").upstreams().get(0).toString());
        assertEquals("9.9.9.9:53", settings("upstreams", "9.9.9.9").upstreams().get(0).toString());
    }

    /** sluice asking {@code nsd} over TLS only, {@code name} after its address, trusting {@code ca}. */
    private static RunningSluice overTls(NsdServer nsd, String name, Path ca, String... keyValues) throws Exception {
        String[] all = java.util.Arrays.copyOf(new String[] {"upstream-tls-ca-file", ca.toString()}, 2 + keyValues.length);
        System.arraycopy(keyValues, 0, all, 2, keyValues.length);
        return RunningSluice.startFor(List.of("tls://127.0.0.1:" + nsd.tlsAddress().getPort() + name), Clock.system(),
                b -> { }, all);
    }

    private static Settings settings(String... keyValues) throws ConfigException {
        Settings.Builder b = new Settings.Builder();
        for (int i = 0; i < keyValues.length; i += 2) {
            b.set(keyValues[i], List.of(keyValues[i + 1]));
        }
        return b.build();
    }
}
