package io.sluice.dnstap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.limit.Clock;
import io.sluice.testing.Await;
import io.sluice.testing.DnstapReader;
import io.sluice.testing.DohClients;
import io.sluice.testing.Dns;
import io.sluice.testing.ProxyV2;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestCertificates;
import io.sluice.testing.TestUpstream;
import io.sluice.transport.SocketProtocol;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/** dnstap read by the dnstap project's own reader, from an in-process sluice in front of a test upstream. */
class DnstapTest {
    @TempDir
    Path dir;
    private Path socket;

    @BeforeEach
    void reader() {
        DnstapReader.assumeInstalled();
        socket = dir.resolve("dnstap.sock");
    }

    @Test
    void aForwardedQueryIsFourMessagesAndACacheHitTwo() throws Exception {
        try (DnstapReader reader = DnstapReader.listen(socket); TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "dnstap.socket", socket.toString(),
                     "dnstap.identity", "resolver-1", "dnstap.version", "test 1", "cache.size", "1000")) {
            int port = s.address().getPort();
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(7, "tap.example.", Type.A))));
            JsonNode query = reader.await(1, DnstapReader.of("CLIENT_QUERY", "tap.example.")).get(0);
            assertEquals("UDP", query.path("socket_protocol").asText());
            assertEquals("INET", query.path("socket_family").asText());
            assertEquals("127.0.0.1", query.path("query_address").asText());
            assertEquals(port, query.path("response_port").asInt());
            assertTrue(query.path("query_message").asText().contains("id: 7"), query.toString());
            JsonNode upstream = reader.await(1, DnstapReader.of("FORWARDER_QUERY", "IN\t A")).get(0);
            assertEquals(up.address().getPort(), upstream.path("response_port").asInt());
            JsonNode reply = reader.await(1, DnstapReader.of("FORWARDER_RESPONSE", "status: NOERROR")).get(0);
            assertEquals(upstream.path("query_port").asInt(), reply.path("query_port").asInt(),
                    "the reply came to the port the query left from");
            JsonNode answer = reader.await(1, DnstapReader.of("CLIENT_RESPONSE", "tap.example.")).get(0);
            assertEquals(query.path("query_port").asInt(), answer.path("query_port").asInt());
            assertTrue(answer.path("response_message").asText().contains("id: 7"), answer.toString());

            // again: answered from the cache, so nothing goes upstream
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(8, "tap.example.", Type.A))));
            reader.await(2, DnstapReader.of("CLIENT_RESPONSE", "tap.example."));
            // over TCP: a TCP client's query is asked upstream over TCP
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.tcp(s.address(), Dns.query(9, "tcp.example.", Type.A))));
            JsonNode tcpAnswer = reader.await(1, DnstapReader.of("CLIENT_RESPONSE", "tcp.example.")).get(0);
            assertEquals("TCP", tcpAnswer.path("socket_protocol").asText());
            JsonNode tcpUpstream = reader.await(1, DnstapReader.of("FORWARDER_QUERY", "tcp.example.")).get(0);
            assertEquals("TCP", tcpUpstream.path("socket_protocol").asText());
            assertEquals(1, reader.await(1, DnstapReader.of("FORWARDER_QUERY", "tap.example.")).size(),
                    "the cache hit asked no upstream");
            assertEquals(0, s.sluice().metrics().count("dnstap_dropped"));
            assertTrue(reader.messages().stream().allMatch(m -> m.path("identity").asText().equals("resolver-1")
                    && m.path("version").asText().equals("test 1")), reader.messages().toString());
        }
    }

    @Test
    void aClientBehindAProxyIsLoggedAsTheClientItsProxyNames() throws Exception {
        try (DnstapReader reader = DnstapReader.listen(socket); TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "dnstap.socket", socket.toString(),
                     "proxy-protocol-from", "127.0.0.0/8")) {
            byte[] datagram = ProxyV2.proxied("10.1.2.3", ProxyV2.UDP, Dns.query(21, "proxied.example.", Type.A));
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), datagram)));
            for (String kind : new String[] {"CLIENT_QUERY", "CLIENT_RESPONSE"}) {
                JsonNode m = reader.await(1, DnstapReader.of(kind, "proxied.example.")).get(0);
                assertEquals("10.1.2.3", m.path("query_address").asText(), m.toString());
                assertEquals(ProxyV2.CLIENT_PORT, m.path("query_port").asInt(), m.toString());
                assertEquals(s.address().getPort(), m.path("response_port").asInt(), "the address sluice read it on");
            }
        }
    }

    @Test
    void fstrmCaptureTakesTheStreamToItsEndAndTheFileReadsBack() throws Exception {
        Path file = dir.resolve("capture.fstrm");
        Files.deleteIfExists(socket);
        Process capture = new ProcessBuilder("fstrm_capture", "-t", "protobuf:dnstap.Dnstap", "-u", socket.toString(),
                "-w", file.toString()).redirectErrorStream(true).start();
        try {
            Await.until("fstrm_capture to listen", () -> Files.exists(socket) || !capture.isAlive());
            assertTrue(capture.isAlive(), "fstrm_capture ended");
            try (TestUpstream up = new TestUpstream();
                 RunningSluice s = RunningSluice.start(List.of(up), "dnstap.socket", socket.toString())) {
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(5, "fstrm.example.", Type.A))));
            } // the stop writes what is queued, then STOP, and waits for fstrm_capture's FINISH
        } finally {
            new ProcessBuilder("kill", "-INT", String.valueOf(capture.pid())).start().waitFor();
            assertTrue(capture.waitFor(10, TimeUnit.SECONDS), "fstrm_capture did not stop");
        }
        String log = new String(capture.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertFalse(log.contains("error"), log);
        DohClients.Run read = DohClients.run("dnstap", "-r", file.toString(), "-q");
        for (String kind : List.of(" CQ ", " FQ ", " FR ", " CR ")) {
            assertTrue(read.output().lines().anyMatch(l -> l.contains(kind) && l.toLowerCase().contains("fstrm.example.")),
                    kind + " in " + read.output());
        }
    }

    @Test
    void aRefusalByALimitIsLoggedWithTheRefusal() throws Exception {
        try (DnstapReader reader = DnstapReader.listen(socket); TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "dnstap.socket", socket.toString(),
                     "limits.default.queries", "1", "limits.default.window", "1h")) {
            Dns.udp(s.address(), Dns.query(1, "a.limited.example.", Type.A));
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.udp(s.address(),
                    Dns.queryWithOpt(2, "b.limited.example.", Type.A, List.of()))));
            JsonNode refused = reader.await(1, DnstapReader.of("CLIENT_RESPONSE", "status: REFUSED")).get(0);
            String text = refused.path("response_message").asText();
            assertTrue(text.contains("b.limited.example.") && text.contains("EDE"), "the reason is in it: " + text);
            reader.await(2, DnstapReader.of("CLIENT_QUERY", "limited.example."));
            assertEquals(1, reader.await(1, DnstapReader.of("FORWARDER_QUERY", "limited.example.")).size(),
                    "the refused query never went upstream");
        }
    }

    @Test
    void dnsOverTlsAndHttpsAreNamedAsSuch() throws Exception {
        DohClients.assumeInstalled();
        Path[] cert = TestCertificates.selfSigned(dir, "tap");
        try (DnstapReader reader = DnstapReader.listen(socket); TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "dnstap.socket", socket.toString(),
                     "tls-listen", "127.0.0.1:0", "https-listen", "127.0.0.1:0", "tls-cert-file", cert[0].toString(),
                     "tls-key-file", cert[1].toString())) {
            int dot = s.sluice().addresses(SocketProtocol.DOT).get(0).getPort();
            int doh = s.sluice().addresses(SocketProtocol.DOH).get(0).getPort();
            DohClients.run("kdig", "@127.0.0.1", "-p", String.valueOf(dot), "+tls", "dot.example.", "A");
            DohClients.run("kdig", "@127.0.0.1", "-p", String.valueOf(doh), "+https", "doh.example.", "A");
            JsonNode overTls = reader.await(1, DnstapReader.of("CLIENT_QUERY", "dot.example.")).get(0);
            JsonNode overHttps = reader.await(1, DnstapReader.of("CLIENT_RESPONSE", "doh.example.")).get(0);
            assertEquals(dot, overTls.path("response_port").asInt());
            assertEquals(doh, overHttps.path("response_port").asInt());
            assertEquals("DOT", overTls.path("socket_protocol").asText(), overTls.toString());
            assertEquals("DOH", overHttps.path("socket_protocol").asText(), overHttps.toString());
        }
    }

    @Test
    void withoutAReaderMessagesAreDroppedAndCountedThenItIsConnectedWhenItComes() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "dnstap.socket", socket.toString())) {
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(1, "early.example.", Type.A))),
                    "no reader: the query is answered all the same");
            awaitDropped(s, 4);
            try (DnstapReader reader = DnstapReader.listen(socket)) {
                askUntilLogged(s, reader, "late"); // sluice tries again each second
                reader.await(1, DnstapReader.of("CLIENT_RESPONSE", "late"));
            }
        }
    }

    @Test
    void aReaderThatStopsReadingCostsMessagesNotQueries() throws Exception {
        try (DnstapReader reader = DnstapReader.listen(socket); TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "dnstap.socket", socket.toString(),
                     "dnstap.queue-size", "64")) {
            Dns.udp(s.address(), Dns.query(1, "first.example.", Type.A));
            reader.await(1, DnstapReader.of("CLIENT_RESPONSE", "first.example."));
            reader.pause();
            try {
                for (int round = 0; round < 8 && s.sluice().metrics().count("dnstap_dropped") == 0; round++) {
                    int[] rcodes = Dns.burst(List.of(s.address()), Dns.names("stalled" + round + ".example", 400));
                    assertEquals(400, rcodes[Rcode.NOERROR], "every query answered while the reader is stalled");
                }
                assertTrue(s.sluice().metrics().count("dnstap_dropped") > 0, "the queue of 64 overflowed");
            } finally {
                reader.resume();
            }
            askUntilLogged(s, reader, "resumed");
        }
    }

    @Test
    void aReloadMovesItToAnotherReader() throws Exception {
        Path other = dir.resolve("other.sock");
        Path conf = dir.resolve("sluice.yml");
        Files.writeString(conf, "dnstap:\n  socket: " + socket + "\n");
        try (DnstapReader first = DnstapReader.listen(socket); DnstapReader second = DnstapReader.listen(other);
             TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), Clock.system(), b -> b.configFile(conf))) {
            Dns.udp(s.address(), Dns.query(1, "before.example.", Type.A));
            first.await(1, DnstapReader.of("CLIENT_RESPONSE", "before.example."));
            Files.writeString(conf, "dnstap:\n  socket: " + other + "\n  identity: moved\n");
            assertEquals(List.of("dnstap.socket: " + socket + " -> " + other, "dnstap.identity: unset -> moved"),
                    s.sluice().reload());
            askUntilLogged(s, second, "after");
            assertTrue(first.messages().stream().noneMatch(DnstapReader.of("CLIENT_QUERY", "after")::test),
                    "the first reader got nothing after the reload");
            Files.writeString(conf, "dnstap:\n  socket: " + other + "\n  identity: moved\n  messages: [client-response]\n");
            assertEquals(List.of("dnstap.messages: client-query, client-response, forwarder-query, forwarder-response"
                    + " -> client-response"), s.sluice().reload());
            Dns.udp(s.address(), Dns.query(3, "only.example.", Type.A));
            second.await(1, DnstapReader.of("CLIENT_RESPONSE", "only.example."));
            assertTrue(second.messages().stream().noneMatch(m -> m.toString().toLowerCase().contains("only.example.")
                    && !m.path("type").asText().equals("CLIENT_RESPONSE")), "only the answer is written");
        }
    }

    private static void awaitDropped(RunningSluice s, long atLeast) {
        Await.until(atLeast + " messages dropped", () -> s.sluice().metrics().count("dnstap_dropped") >= atLeast);
    }

    /**
     * Asks names starting with {@code label} until the reader has the query of one: a reader that
     * comes, or comes back, is written to from a moment the test cannot know.
     */
    private static void askUntilLogged(RunningSluice s, DnstapReader reader, String label) throws Exception {
        int[] i = {0};
        Await.until("a query " + label + "N logged: " + reader.errors(), () -> {
            if (reader.messages().stream().anyMatch(DnstapReader.of("CLIENT_QUERY", label)::test)) {
                return true;
            }
            try {
                Dns.udp(s.address(), Dns.query(2, label + i[0]++ + ".example.", Type.A));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            return false;
        });
    }
}
