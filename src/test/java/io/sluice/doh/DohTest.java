package io.sluice.doh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.testing.Await;
import io.sluice.testing.DohClients;
import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestCertificates;
import io.sluice.testing.TestUpstream;
import io.sluice.transport.SocketProtocol;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/**
 * DNS over HTTPS (RFC 8484) with the clients operators use: kdig and dig over HTTP/2, curl over
 * HTTP/2 and HTTP/1.1, against an in-process sluice with a certificate made by openssl.
 */
class DohTest {
    @TempDir
    Path dir;
    private Path[] cert;

    @BeforeEach
    void clients() throws Exception {
        DohClients.assumeInstalled();
        cert = TestCertificates.selfSigned(dir, "doh");
    }

    private RunningSluice serving(TestUpstream up, String... more) throws Exception {
        String[] kv = new String[6 + more.length];
        System.arraycopy(new String[] {"https-listen", "127.0.0.1:0", "tls-cert-file", cert[0].toString(),
                "tls-key-file", cert[1].toString()}, 0, kv, 0, 6);
        System.arraycopy(more, 0, kv, 6, more.length);
        return RunningSluice.start(List.of(up), kv);
    }

    private static String url(RunningSluice s) {
        InetSocketAddress at = s.sluice().addresses(SocketProtocol.DOH).get(0);
        return "https://127.0.0.1:" + at.getPort() + "/dns-query";
    }

    @Test
    void kdigAndDigAskOverHttpsAndTheQueriesCountAsHttps() throws Exception {
        try (TestUpstream up = new TestUpstream(); RunningSluice s = serving(up)) {
            int port = s.sluice().addresses(SocketProtocol.DOH).get(0).getPort();
            DohClients.Run post = DohClients.run("kdig", "@127.0.0.1", "-p", String.valueOf(port), "+https",
                    "www.example.com", "A");
            assertTrue(post.output().contains("status: NOERROR") && post.output().contains("id: 0"), post.output());
            assertTrue(post.output().contains("ANSWER: 1"), post.output());
            DohClients.Run get = DohClients.run("kdig", "@127.0.0.1", "-p", String.valueOf(port), "+https-get",
                    "get.example.com", "AAAA");
            assertTrue(get.output().contains("status: NOERROR"), get.output());
            DohClients.Run dig = DohClients.run("dig", "@127.0.0.1", "-p", String.valueOf(port), "+https",
                    "+tries=1", "dig.example.com", "A");
            assertTrue(dig.output().contains("status: NOERROR"), dig.output());
            assertEquals(3, s.sluice().metrics().count("queries", "protocol", "https"));
            assertEquals(0, s.sluice().metrics().count("queries", "protocol", "tcp"));
        }
    }

    @Test
    void curlGetsTheAnswerWithItsSmallestTtlAsMaxAgeOverHttp2AndHttp11() throws Exception {
        try (TestUpstream up = new TestUpstream(); RunningSluice s = serving(up)) {
            up.ttl("ttl.example.", 123);
            String dns = Base64.getUrlEncoder().withoutPadding().encodeToString(Dns.query(0, "ttl.example.", Type.A));
            DohClients.Run h2 = DohClients.curl(dir, url(s) + "?dns=" + dns, "--http2");
            assertTrue(h2.output().startsWith("HTTP/2 200"), h2.output());
            assertTrue(h2.output().contains("content-type: application/dns-message"), h2.output());
            assertTrue(h2.output().contains("cache-control: max-age=123"), h2.output());
            byte[] answer = body(h2);
            assertEquals(0, Dns.id(answer), "ID 0, as DoH clients send it");
            assertEquals(Rcode.NOERROR, Dns.rcode(answer));

            Path q = Files.write(dir.resolve("q.bin"), Dns.query(0, "post.example.", Type.A));
            DohClients.Run h1 = DohClients.curl(dir, url(s), "--http1.1", "-H", "content-type: application/dns-message",
                    "--data-binary", "@" + q);
            assertTrue(h1.output().startsWith("HTTP/1.1 200"), h1.output());
            assertTrue(h1.output().contains("cache-control: max-age=300"), h1.output());
            assertEquals(Rcode.NOERROR, Dns.rcode(body(h1)));
        }
    }

    @Test
    void aClientsMistakesGet4xxAndTheServerGoesOn() throws Exception {
        try (TestUpstream up = new TestUpstream(); RunningSluice s = serving(up)) {
            Path q = Files.write(dir.resolve("q.bin"), Dns.query(0, "fine.example.", Type.A));
            Path big = Files.write(dir.resolve("big.bin"), new byte[70_000]);
            Path shortOne = Files.write(dir.resolve("short.bin"), new byte[5]);
            for (String version : List.of("--http2", "--http1.1")) {
                assertStatus(400, DohClients.curl(dir, url(s) + "?dns=***", version), "a dns= that is not base64url");
                assertStatus(400, DohClients.curl(dir, url(s), version), "a GET without dns=");
                assertStatus(415, DohClients.curl(dir, url(s), version, "-H", "content-type: text/plain",
                        "--data-binary", "@" + q), "another content type");
                assertStatus(400, DohClients.curl(dir, url(s), version, "-H", "content-type: application/dns-message",
                        "--data-binary", "@" + shortOne), "shorter than a DNS header");
                assertStatus(400, DohClients.curl(dir, url(s), version, "-H", "content-type: application/dns-message",
                        "--data-binary", "@" + big), "larger than a DNS message");
                assertStatus(404, DohClients.curl(dir, url(s).replace("/dns-query", "/other"), version), "another path");
                assertStatus(405, DohClients.curl(dir, url(s), version, "-X", "PUT"), "another method");
                assertStatus(200, DohClients.curl(dir, url(s), version, "-H", "content-type: application/dns-message",
                        "--data-binary", "@" + q), "served after all of that");
            }
            assertEquals(0, s.sluice().metrics().count("internal_errors"));
        }
    }

    @Test
    void aClientThatNeverOpensItsWindowGetsAHundredStreamsAndOthersAreServed() throws Exception {
        if (System.getenv("SLUICE_REQUIRE_DOH_CLIENTS") == null) {
            assumeTrue(Files.isExecutable(Path.of("/usr/bin/nghttp")), "nghttp (nghttp2-client) is not installed");
        }
        try (TestUpstream up = new TestUpstream(); RunningSluice s = serving(up)) {
            String dns = Base64.getUrlEncoder().withoutPadding().encodeToString(
                    Dns.query(0, TestUpstream.GIANT, Type.TXT));
            // a stream window of 0: no answer's DATA can be sent, so each of its streams stays open
            Process nghttp = new ProcessBuilder("nghttp", "-n", "-w", "0", "-m", "300", url(s) + "?dns=" + dns)
                    .redirectErrorStream(true).start();
            try {
                Await.until("the stalled client's streams taken",
                        () -> s.sluice().metrics().count("queries", "protocol", "https") >= Http2Streams.MAX_STREAMS);
                assertStatus(200, DohClients.curl(dir, url(s) + "?dns=" + Base64.getUrlEncoder().withoutPadding()
                        .encodeToString(Dns.query(0, "other.example.", Type.A)), "--http2"), "another client, served");
                assertEquals(Http2Streams.MAX_STREAMS + 1, s.sluice().metrics().count("queries", "protocol", "https"),
                        "no stream past the hundred: the stalled connection holds a hundred answers at most");
            } finally {
                nghttp.destroy();
                nghttp.waitFor();
            }
        }
    }

    @Test
    void manyStreamsOfOneConnectionAllWithIdZeroEachGetTheAnswerToTheirOwnQuestion() throws Exception {
        try (TestUpstream up = new TestUpstream(); RunningSluice s = serving(up)) {
            up.delayMillis(20); // answers come back while the other streams are still asking
            List<String> command = new ArrayList<>(List.of("curl", "-sk", "--http2", "--parallel",
                    "--parallel-max", "50", "-w", "%{num_connects}\n"));
            int n = 120;
            for (int i = 0; i < n; i++) {
                String dns = Base64.getUrlEncoder().withoutPadding().encodeToString(
                        Dns.query(0, "n" + i + ".many.example.", i % 2 == 0 ? Type.A : Type.AAAA));
                command.addAll(List.of("-o", dir.resolve("a" + i).toString(), url(s) + "?dns=" + dns));
            }
            DohClients.Run r = DohClients.run(command.toArray(String[]::new));
            assertEquals(0, r.exit(), r.output());
            for (int i = 0; i < n; i++) {
                Message answer = new Message(Files.readAllBytes(dir.resolve("a" + i)));
                assertEquals(0, answer.getHeader().getID(), "the client's ID back, not the tag it was asked with");
                assertEquals("n" + i + ".many.example.", answer.getQuestion().getName().toString());
                assertEquals(i % 2 == 0 ? Type.A : Type.AAAA, answer.getQuestion().getType());
                assertEquals(Rcode.NOERROR, answer.getRcode());
            }
            assertTrue(r.output().lines().filter(l -> l.matches("[0-9]+")).mapToInt(Integer::parseInt).sum() < 10,
                    "the streams shared a few connections: " + r.output());
        }
    }

    @Test
    void anAnswerMadeAtOnceReachesAPostAsAGet() throws Exception {
        try (TestUpstream up = new TestUpstream(); RunningSluice s = serving(up)) {
            // a question cut short: FORMERR, answered inside the DATA frame that ends the request
            Path malformed = Files.write(dir.resolve("malformed.bin"),
                    new byte[] {0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 3, 'a', 'b'});
            for (String version : List.of("--http2", "--http1.1")) {
                DohClients.Run r = DohClients.curl(dir, url(s), version, "-H", "content-type: application/dns-message",
                        "--data-binary", "@" + malformed);
                assertStatus(200, r, version);
                assertEquals(Rcode.FORMERR, Dns.rcode(body(r)), version);
            }
            assertEquals(2, s.sluice().metrics().count("formerr"));
        }
    }

    @Test
    void theLimitsApplyOverHttps() throws Exception {
        try (TestUpstream up = new TestUpstream(); RunningSluice s = serving(up, "limits.default.queries", "1",
                "limits.default.window", "1h")) {
            String first = Base64.getUrlEncoder().withoutPadding().encodeToString(Dns.query(0, "a.limited.example.", Type.A));
            String second = Base64.getUrlEncoder().withoutPadding().encodeToString(Dns.query(0, "b.limited.example.", Type.A));
            assertEquals(Rcode.NOERROR, Dns.rcode(body(DohClients.curl(dir, url(s) + "?dns=" + first, "--http2"))));
            DohClients.Run over = DohClients.curl(dir, url(s) + "?dns=" + second, "--http2");
            assertTrue(over.output().startsWith("HTTP/2 200"), "a refusal is a DNS answer: " + over.output());
            assertEquals(Rcode.REFUSED, Dns.rcode(body(over)));
            assertEquals(1, s.sluice().metrics().count("limited", "action", "refused"));
        }
    }

    @Test
    void aConnectionWindsDownAtMaxTcpQueriesPerConnection() throws Exception {
        try (TestUpstream up = new TestUpstream(); RunningSluice s = serving(up, "max-tcp-queries-per-connection", "2")) {
            String dns = Base64.getUrlEncoder().withoutPadding().encodeToString(Dns.query(0, "bound.example.", Type.A));
            String u = url(s) + "?dns=" + dns;
            // three transfers with one curl: the second reuses the first's connection, the third needs a new one
            DohClients.Run r = DohClients.run("curl", "-sk", "--http2", "-o", "/dev/null", "-o", "/dev/null", "-o",
                    "/dev/null", "-w", "%{http_code} %{num_connects}\n", u, u, u);
            assertEquals(List.of("200 1", "200 0", "200 1"), r.output().lines().toList(), r.output());
        }
    }

    @Test
    void pipelinedHttp11RequestsAreAllAnsweredInOrderAndABadEscapeIsA400() throws Exception {
        try (TestUpstream up = new TestUpstream(); RunningSluice s = serving(up)) {
            up.delayMillis(50); // every answer parked for a while: the requests behind it wait their turn
            int port = s.sluice().addresses(SocketProtocol.DOH).get(0).getPort();
            StringBuilder requests = new StringBuilder();
            for (int i = 0; i < 3; i++) {
                String dns = Base64.getUrlEncoder().withoutPadding().encodeToString(
                        Dns.query(0, "p" + i + ".example.", Type.A));
                requests.append("GET /dns-query?dns=").append(dns).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
            }
            requests.append("GET /dns-query?dns=% HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
            Path in = Files.writeString(dir.resolve("pipelined.txt"), requests.toString());
            // -quiet reads on after its input ends, until the server closes (the last request asks it to)
            DohClients.Run r = DohClients.run("sh", "-c", "openssl s_client -quiet -alpn http/1.1 -connect 127.0.0.1:"
                    + port + " < " + in + " 2>/dev/null");
            // each answer's binary body runs into the next status line: the status lines are found, not split
            List<String> statuses = java.util.regex.Pattern.compile("HTTP/1\\.1 (\\d{3})").matcher(r.output()).results()
                    .map(m -> m.group(1)).toList();
            assertEquals(List.of("200", "200", "200", "400"), statuses, r.output());
        }
    }

    @Test
    void anHttp11ClientThatSendsAndNeverReadsIsNoLongerReadOnceItsAnswersBackUp() throws Exception {
        try (TestUpstream up = new TestUpstream(); RunningSluice s = serving(up)) {
            int port = s.sluice().addresses(SocketProtocol.DOH).get(0).getPort();
            String dns = Base64.getUrlEncoder().withoutPadding().encodeToString(Dns.query(0, TestUpstream.GIANT, Type.TXT));
            int n = 600; // 24 MB of answers, about 40,000 bytes each
            StringBuilder requests = new StringBuilder();
            for (int i = 0; i < n; i++) {
                requests.append("GET /dns-query?dns=").append(dns).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                        .append(i == n - 1 ? "Connection: close\r\n" : "").append("\r\n");
            }
            Path in = Files.writeString(dir.resolve("pipelined.txt"), requests.toString());
            // openssl s_client writes the answers to a pipe nobody reads yet: once the pipe is full it
            // stops reading its socket, a client that sends and never reads
            Process client = new ProcessBuilder("openssl", "s_client", "-quiet", "-alpn", "http/1.1", "-connect",
                    "127.0.0.1:" + port).redirectInput(in.toFile()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            try {
                long[] last = {-1, System.nanoTime()};
                Await.until("the answers to back up", () -> {
                    long now = s.sluice().metrics().count("queries", "protocol", "https");
                    if (now != last[0]) {
                        last[0] = now;
                        last[1] = System.nanoTime();
                    }
                    return now > 0 && System.nanoTime() - last[1] > 300_000_000L; // no query taken for 300 ms
                });
                long taken = s.sluice().metrics().count("queries", "protocol", "https");
                assertTrue(taken < n / 2, taken + " of " + n + " requests taken from a client that reads nothing");
                String out = new String(client.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.ISO_8859_1);
                assertEquals(n, java.util.regex.Pattern.compile("HTTP/1\\.1 200").matcher(out).results().count(),
                        "every request answered once the client reads (" + out.length() + " bytes read)");
            } finally {
                client.destroy();
                client.waitFor();
            }
        }
    }

    private static void assertStatus(int status, DohClients.Run r, String what) {
        String first = r.output().lines().findFirst().orElse("");
        assertTrue(first.matches("HTTP/[0-9.]+ " + status + ".*"), what + ": " + r.output());
        assertFalse(first.matches("HTTP/[0-9.]+ 5.*"), what);
    }

    private static byte[] body(DohClients.Run r) {
        String hex = r.output().substring(r.output().indexOf("--body--\n") + 9).strip();
        return HexFormat.of().parseHex(hex);
    }

    /**
     * Only a whole exchange keeps a DoH connection from being idle, as over TCP: an HTTP/2 client
     * that only sends PING frames (each acknowledged) is closed after tcp-idle-timeout, counted.
     */
    @Test
    void pingsAloneDoNotKeepAnHttp2ConnectionOpen() throws Exception {
        try (TestUpstream up = new TestUpstream(); RunningSluice s = serving(up, "tcp-idle-timeout", "1s")) {
            io.netty.channel.EventLoopGroup group = new io.netty.channel.nio.NioEventLoopGroup(1);
            try {
                java.util.concurrent.atomic.AtomicInteger acks = new java.util.concurrent.atomic.AtomicInteger();
                io.netty.handler.ssl.SslContext tls = io.netty.handler.ssl.SslContextBuilder.forClient()
                        .trustManager(io.netty.handler.ssl.util.InsecureTrustManagerFactory.INSTANCE)
                        .applicationProtocolConfig(new io.netty.handler.ssl.ApplicationProtocolConfig(
                                io.netty.handler.ssl.ApplicationProtocolConfig.Protocol.ALPN,
                                io.netty.handler.ssl.ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                                io.netty.handler.ssl.ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                                "h2")).build();
                io.netty.channel.Channel ch = new io.netty.bootstrap.Bootstrap().group(group)
                        .channel(io.netty.channel.socket.nio.NioSocketChannel.class)
                        .handler(new io.netty.channel.ChannelInitializer<>() {
                            @Override
                            protected void initChannel(io.netty.channel.Channel c) {
                                c.pipeline().addLast(tls.newHandler(c.alloc()),
                                        io.netty.handler.codec.http2.Http2FrameCodecBuilder.forClient().build(),
                                        new io.netty.channel.ChannelInboundHandlerAdapter() {
                                            @Override
                                            public void channelRead(io.netty.channel.ChannelHandlerContext ctx, Object msg) {
                                                if (msg instanceof io.netty.handler.codec.http2.Http2PingFrame ping
                                                        && ping.ack()) {
                                                    acks.incrementAndGet();
                                                }
                                                io.netty.util.ReferenceCountUtil.release(msg);
                                            }
                                        });
                            }
                        }).connect(s.sluice().addresses(SocketProtocol.DOH).get(0)).sync().channel();
                long started = System.nanoTime();
                for (long n = 0; ch.isActive() && System.nanoTime() - started < 10_000_000_000L; n++) {
                    ch.writeAndFlush(new io.netty.handler.codec.http2.DefaultHttp2PingFrame(n));
                    ch.closeFuture().await(200); // a PING every 200 ms, well within the idle timeout
                }
                assertTrue(acks.get() > 0, "the PINGs were answered: the connection was HTTP/2 and alive");
                assertFalse(ch.isActive(), "closed as idle, though it pinged all along");
                assertEquals(1, s.sluice().metrics().count("tcp_idle_closed"));
            } finally {
                group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).sync();
            }
        }
    }
}
