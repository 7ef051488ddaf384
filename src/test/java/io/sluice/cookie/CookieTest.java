package io.sluice.cookie;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.limit.ManualClock;
import io.sluice.testing.Dns;
import io.sluice.testing.DohClients;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xbill.DNS.CookieOption;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.Flags;
import org.xbill.DNS.GenericEDNSOption;
import org.xbill.DNS.Message;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** DNS cookies end to end: real dig and kdig, real sockets, an upstream that records what it is sent. */
class CookieTest {
    private static final Pattern DIG_COOKIE = Pattern.compile("COOKIE: ([0-9a-fA-F]{48})( \\(good\\))?");
    private static final byte[] CLIENT = "cookie01".getBytes(StandardCharsets.US_ASCII);

    private final ManualClock clock = new ManualClock();
    private TestUpstream upstream;

    @BeforeEach
    void upstream() throws Exception {
        upstream = new TestUpstream();
    }

    @AfterEach
    void stop() throws Exception {
        upstream.close();
    }

    private RunningSluice sluice(String... keyValues) throws Exception {
        return RunningSluice.start(List.of(upstream), clock, b -> { }, keyValues);
    }

    /** What dig or kdig printed; skipped (failed under .ci/run) unless they are installed. */
    private static String run(String... command) throws IOException, InterruptedException {
        return DohClients.run(command).output();
    }

    private static String dig(RunningSluice s, String... more) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("dig", "@127.0.0.1", "-p",
                String.valueOf(s.address().getPort()), "+tries=1", "+time=5"));
        command.addAll(List.of(more));
        return run(command.toArray(new String[0]));
    }

    /** The COOKIE dig printed, and whether it called it good (its client cookie came back). */
    private static Matcher cookieIn(String digOutput) {
        Matcher m = DIG_COOKIE.matcher(digOutput);
        assertTrue(m.find(), "no COOKIE in: " + digOutput);
        return m;
    }

    private static CookieOption cookieOf(Message m) {
        OPTRecord opt = m.getOPT();
        assertNotNull(opt, "no OPT in " + m);
        List<EDNSOption> cookies = opt.getOptions(EDNSOption.Code.COOKIE);
        assertEquals(1, cookies.size(), "one COOKIE in " + m);
        return (CookieOption) cookies.get(0);
    }

    private static byte[] withCookie(int id, String name, EDNSOption cookie) {
        return Dns.queryWithOpt(id, name, Type.A, List.of(cookie));
    }

    /** The query the upstream was last sent carried no COOKIE option. */
    private void assertUpstreamSawNoCookie() throws IOException {
        OPTRecord opt = Dns.parse(upstream.lastQuery()).getOPT();
        assertNotNull(opt, "the client's OPT goes on");
        assertTrue(opt.getOptions(EDNSOption.Code.COOKIE).isEmpty(), "the client's COOKIE never goes upstream");
    }

    @Test
    void digCallsTheCookieGoodOverUdpAndTcpAndItsServerCookieIsValidWhenSentBack() throws Exception {
        try (RunningSluice s = sluice()) {
            for (String transport : new String[] {"+notcp", "+tcp"}) {
                String first = dig(s, transport, "www.example.", "A");
                assertTrue(first.contains("status: NOERROR"), first);
                Matcher cookie = cookieIn(first);
                assertNotNull(cookie.group(2), "dig checks its client cookie came back: " + first);
                assertUpstreamSawNoCookie();
                String again = dig(s, transport, "+cookie=" + cookie.group(1), "www.example.", "A");
                assertNotNull(cookieIn(again).group(2), again);
            }
            assertEquals(2, s.sluice().metrics().count("cookies", "server_cookie", "absent"));
            assertEquals(2, s.sluice().metrics().count("cookies", "server_cookie", "valid"));
        }
    }

    @Test
    void kdigGetsItsClientCookieBackWithAServerCookie() throws Exception {
        try (RunningSluice s = sluice()) {
            String out = run("kdig", "@127.0.0.1", "-p", String.valueOf(s.address().getPort()),
                    "+cookie=0102030405060708", "www.example.", "A");
            assertTrue(out.contains("NOERROR"), out);
            Matcher m = Pattern.compile("COOKIE: ([0-9A-Fa-f]+)").matcher(out);
            assertTrue(m.find(), out);
            assertTrue(m.group(1).toLowerCase().startsWith("0102030405060708"), out);
            assertEquals(48, m.group(1).length(), "client cookie and a 16-octet server cookie: " + out);
            assertTrue(m.group(1).substring(16, 18).equals("01"), "RFC 9018's version 1: " + out);
        }
    }

    @Test
    void cachedRefusedAndSluicesOwnAnswersCarryTheirOwnClientsCookie() throws Exception {
        try (RunningSluice s = sluice("cache.size", "1000", "limits.default.queries", "1")) {
            Message first = Dns.parse(Dns.udp(s.address(), withCookie(1, "www.example.", new CookieOption(CLIENT))));
            assertArrayEquals(CLIENT, cookieOf(first).getClientCookie());
            byte[] other = "cookie02".getBytes(StandardCharsets.US_ASCII);
            int asked = upstream.udpQueries();
            Message cached = Dns.parse(Dns.udp(s.address(), withCookie(2, "WWW.example.", new CookieOption(other))));
            assertEquals(asked, upstream.udpQueries(), "from the cache");
            assertArrayEquals(other, cookieOf(cached).getClientCookie(), "the cache adds the asking client's cookie");
            assertFalse(Arrays.equals(cookieOf(first).getServerCookie().get(), cookieOf(cached).getServerCookie().get()));

            Dns.udp(s.address(), withCookie(3, "a.example.com.", new CookieOption(CLIENT)));
            Message refused = Dns.parse(Dns.udp(s.address(), withCookie(4, "b.example.com.", new CookieOption(CLIENT))));
            assertEquals(Rcode.REFUSED, refused.getRcode());
            assertArrayEquals(CLIENT, cookieOf(refused).getClientCookie(), "a refusal carries the cookie too");
        }
    }

    @Test
    void aQueryWithOnlyACookieGetsAServerCookieFromSluiceAndNothingGoesUpstream() throws Exception {
        try (RunningSluice s = sluice()) {
            String out = dig(s, "+header-only", "+cookie");
            assertTrue(out.contains("status: NOERROR"), out);
            assertNotNull(cookieIn(out).group(2), out);
            assertEquals(0, upstream.udpQueries() + upstream.tcpQueries());
        }
    }

    @Test
    void aCookieOfAWrongLengthIsFormerrAndAForgedServerCookieIsAnsweredWithANewOne() throws Exception {
        try (RunningSluice s = sluice()) {
            byte[] formerr = Dns.udp(s.address(),
                    withCookie(1, "www.example.", new GenericEDNSOption(EDNSOption.Code.COOKIE, new byte[12])));
            assertEquals(Rcode.FORMERR, Dns.rcode(formerr));
            assertNotNull(Dns.parse(formerr).getOPT(), "FORMERR with an OPT, as the query had one");
            assertEquals(0, upstream.udpQueries());
            byte[] twice = Dns.udp(s.address(), Dns.queryWithOpt(3, "www.example.", Type.A,
                    List.of(new CookieOption(CLIENT), new CookieOption(CLIENT))));
            assertEquals(Rcode.FORMERR, Dns.rcode(twice), "two COOKIEs");
            assertEquals(0, upstream.udpQueries());

            byte[] forged = new byte[16];
            forged[0] = 1;
            Message m = Dns.parse(Dns.udp(s.address(), withCookie(2, "www.example.", new CookieOption(CLIENT, forged))));
            assertEquals(Rcode.NOERROR, m.getRcode());
            assertNotEquals(HexFormat.of().formatHex(forged),
                    HexFormat.of().formatHex(cookieOf(m).getServerCookie().get()), "a new server cookie");
            assertEquals(2, s.sluice().metrics().count("cookies", "server_cookie", "malformed"));
            assertEquals(1, s.sluice().metrics().count("cookies", "server_cookie", "invalid"));
            assertUpstreamSawNoCookie();
        }
    }

    @Test
    void anAnswerTheCookieMakesTooLargeForItsUdpClientLeavesTruncatedWithTheCookie() throws Exception {
        try (RunningSluice s = sluice()) {
            Message plain = Dns.parse(Dns.udp(s.address(), Dns.queryWithOpt(1, TestUpstream.MID, Type.TXT, List.of())));
            int size = plain.toWire().length;
            assertTrue(size > 512 && !plain.getHeader().getFlag(Flags.TC), "a whole answer over 512 octets: " + size);
            // a payload size the answer fits without a cookie, and not with one
            Message q = Dns.message(2, TestUpstream.MID, Type.TXT);
            q.addRecord(new OPTRecord(size + 4, 0, 0, 0, List.of(new CookieOption(CLIENT))), Section.ADDITIONAL);
            byte[] answer = Dns.udp(s.address(), q.toWire());
            assertTrue(answer.length <= size + 4, "within the client's payload size: " + answer.length);
            Message m = Dns.parse(answer);
            assertTrue(m.getHeader().getFlag(Flags.TC), m.toString());
            assertArrayEquals(CLIENT, cookieOf(m).getClientCookie(), "the truncated answer keeps the cookie");
        }
    }

    @Test
    void offTheClientsCookieGoesUpstreamAsSent() throws Exception {
        try (RunningSluice s = sluice("cookies.enabled", "false")) {
            Dns.udp(s.address(), withCookie(1, "www.example.", new CookieOption(CLIENT)));
            List<EDNSOption> sent = Dns.parse(upstream.lastQuery()).getOPT().getOptions(EDNSOption.Code.COOKIE);
            assertEquals(1, sent.size());
            assertArrayEquals(CLIENT, ((CookieOption) sent.get(0)).getClientCookie());
        }
    }

    @Test
    void aReloadReadsTheSecretAgainAndTheOldOnesCookiesStayValid(@TempDir Path dir) throws Exception {
        Path secret = dir.resolve("cookie-secret");
        Files.writeString(secret, "# a fleet's secret\n000102030405060708090a0b0c0d0e0f\n");
        Path config = dir.resolve("sluice.yml");
        Files.writeString(config, "cookies:\n  secret-file: " + secret + "\n");
        try (RunningSluice s = RunningSluice.start(List.of(upstream), clock, b -> b.configFile(config))) {
            CookieOption old = cookieOf(Dns.parse(Dns.udp(s.address(), withCookie(1, "www.example.", new CookieOption(CLIENT)))));
            Files.writeString(secret, "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff\n");
            assertTrue(String.join("\n", s.sluice().reload()).contains("cookies.secret-file: a new secret"));
            Dns.udp(s.address(), withCookie(2, "www.example.", old));
            assertEquals(1, s.sluice().metrics().count("cookies", "server_cookie", "valid"), "the previous secret's");
            clock.advanceMillis(3_601_000);
            Dns.udp(s.address(), withCookie(3, "www.example.", old));
            assertEquals(1, s.sluice().metrics().count("cookies", "server_cookie", "invalid"),
                    "an hour on, the cookie is too old (ServerCookiesTest holds the replaced secret's own hour)");

            Files.writeString(secret, "not hex\n");
            String error = org.junit.jupiter.api.Assertions.assertThrows(io.sluice.config.ConfigException.class,
                    () -> s.sluice().reload()).getMessage();
            assertTrue(error.contains("cookies.secret-file") && error.contains(secret.toString()), error);
        }
    }
}
