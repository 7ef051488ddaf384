package io.sluice.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.limit.ManualClock;
import io.sluice.testing.Await;
import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/** The admin API over real HTTP, its changes seen by real DNS queries. */
class AdminApiTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newHttpClient();

    @TempDir
    Path dir;

    record Reply(int status, JsonNode body) {
    }

    private Reply call(RunningSluice s, String method, String path, String body, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.sluice().adminAddress().getPort()
                + path)).method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        return new Reply(r.statusCode(), r.body().isEmpty() ? null : JSON.readTree(r.body()));
    }

    private Reply call(RunningSluice s, String method, String path, String body) throws Exception {
        return call(s, method, path, body, null);
    }

    /** The status a request line gets as written, which java.net.URI would refuse to send. */
    private static int rawStatus(RunningSluice s, String target) throws Exception {
        try (java.net.Socket c = new java.net.Socket("127.0.0.1", s.sluice().adminAddress().getPort())) {
            c.getOutputStream().write(("GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            String status = new java.io.BufferedReader(new java.io.InputStreamReader(c.getInputStream(),
                    java.nio.charset.StandardCharsets.US_ASCII)).readLine();
            return Integer.parseInt(status.split(" ")[1]);
        }
    }

    private static int rcode(RunningSluice s, String name) throws Exception {
        return Dns.rcode(Dns.udp(s.address(), Dns.query(1, name, Type.A)));
    }

    @Test
    void aRuntimeLimitAppliesToTheNextQueryAndIsGoneWhenDeleted() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), new ManualClock(), b -> { }, "admin.listen", "127.0.0.1:0")) {
            assertEquals(Rcode.NOERROR, rcode(s, "a.example.com."));
            assertEquals(Rcode.NOERROR, rcode(s, "b.example.com."), "no limit yet");
            Reply set = call(s, "PUT", "/api/v1/limits/example.com",
                    "{\"queries\": 1, \"window\": \"1h\", \"ttl\": \"10m\", \"reason\": \"flood\"}");
            assertEquals(200, set.status(), set.toString());
            assertEquals("api", set.body().get("source").asText());
            assertEquals("flood", set.body().get("reason").asText());
            assertEquals(Rcode.NOERROR, rcode(s, "c.example.com."));
            assertEquals(Rcode.REFUSED, rcode(s, "d.example.com."), "the new budget, at once");
            Reply list = call(s, "GET", "/api/v1/limits", null);
            assertEquals(200, list.status());
            assertTrue(list.body().get("default").get("unlimited").asBoolean(), list.toString());
            JsonNode entry = list.body().get("limits").get(0);
            assertEquals("example.com", entry.get("domain").asText());
            assertEquals(1, entry.get("queries").asInt());
            assertEquals("1h", entry.get("window").asText());
            assertTrue(entry.get("expires").asText().endsWith("Z"), entry.toString());
            assertEquals("127.0.0.1", entry.get("set-by").asText());
            Reply removed = call(s, "DELETE", "/api/v1/limits/example.com", null);
            assertEquals(200, removed.status(), removed.toString());
            assertEquals(Rcode.NOERROR, rcode(s, "e.example.com."), "back to the default");
            assertEquals(404, call(s, "DELETE", "/api/v1/limits/example.com", null).status());
        }
    }

    @Test
    void badRequestsAreRefusedWithTheirReason() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "admin.listen", "127.0.0.1:0")) {
            Reply www = call(s, "PUT", "/api/v1/limits/www.example.com", "{\"queries\": 5}");
            assertEquals(400, www.status());
            assertTrue(www.body().get("error").asText().contains("www.example.com counts for example.com"), www.toString());
            Reply unicode = call(s, "PUT", "/api/v1/limits/b%C3%BCcher.de", "{\"queries\": 5, \"window\": \"1s\"}");
            assertEquals(200, unicode.status(), unicode.toString());
            assertEquals("xn--bcher-kva.de", unicode.body().get("domain").asText());
            assertEquals(400, call(s, "PUT", "/api/v1/limits/example.com", "{\"queries\": 0}").status());
            assertEquals(400, call(s, "PUT", "/api/v1/limits/example.com", "{\"queries\": 3000000000}").status(),
                    "the file's bound, 2^31-1, holds here too");
            assertEquals(400, call(s, "PUT", "/api/v1/limits/example.com", "{\"queries\": 5, \"window\": \"soon\"}").status());
            Reply unknown = call(s, "PUT", "/api/v1/limits/example.com", "{\"querys\": 5}");
            assertTrue(unknown.body().get("error").asText().contains("querys"), unknown.toString());
            assertEquals(400, call(s, "PUT", "/api/v1/limits/example.com", "not json").status());
            assertEquals(404, call(s, "GET", "/api/v1/nothing", null).status());
            assertEquals(405, call(s, "POST", "/api/v1/limits", "{}").status());
            assertEquals(400, call(s, "GET", "/api/v1/top?n=zero", null).status());
            assertEquals(400, rawStatus(s, "/api/v1/top?n=%zz"), "a bad escape");
            Reply tooLong = call(s, "PUT", "/api/v1/limits/example.com", "{\"queries\": 5, \"window\": \"3000000h\"}");
            assertEquals(400, tooLong.status(), tooLong.toString());
            Reply burst = call(s, "PUT", "/api/v1/limits/example.com", "{\"queries\": 5, \"burst\": 10}");
            assertEquals(400, burst.status(), "a fixed window has no burst to set: " + burst);
            assertTrue(burst.body().get("error").asText().startsWith("burst: only token-bucket"), burst.toString());
            assertEquals(200, call(s, "PUT", "/api/v1/limits/example.com", "{\"queries\": 5}").status(),
                    "a refused change leaves nothing behind");
        }
    }

    @Test
    void aTokenGuardsEverythingButHealthz() throws Exception {
        Path token = dir.resolve("token");
        Files.writeString(token, "s3cret-token\n");
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "admin.listen", "127.0.0.1:0",
                     "admin.token-file", token.toString())) {
            assertEquals(200, call(s, "GET", "/healthz", null).status());
            HttpResponse<String> page = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + s.sluice().adminAddress().getPort() + "/")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(401, page.statusCode(), "the page too needs the token");
            assertTrue(page.body().contains("id=\"token\""), "a browser gets a form that asks for it: " + page.body());
            HttpResponse<String> withToken = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + s.sluice().adminAddress().getPort() + "/")).header("Authorization", "Bearer s3cret-token").build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, withToken.statusCode());
            assertTrue(withToken.body().contains("Busiest domains"));
            Reply none = call(s, "GET", "/api/v1/limits", null);
            assertEquals(401, none.status());
            assertTrue(none.body().has("error"));
            assertEquals(401, call(s, "GET", "/readyz", null, "wrong").status());
            assertEquals(200, call(s, "GET", "/readyz", null, "s3cret-token").status());
            assertEquals(200, call(s, "GET", "/api/v1/limits", null, "s3cret-token").status());
        }
    }

    @Test
    void readyzSaysWhenEveryUpstreamIsDown() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "admin.listen", "127.0.0.1:0", "timeout", "100ms",
                     "query-timeout", "300ms", "max-fails", "1", "threads", "1")) {
            assertEquals(200, call(s, "GET", "/readyz", null).status());
            up.mode(TestUpstream.Mode.SILENT);
            Dns.udp(s.address(), Dns.query(1, "silent.example.", Type.A), 3000);
            Reply down = call(s, "GET", "/readyz", null);
            assertEquals(503, down.status(), down.toString());
        }
    }

    @Test
    void topRanksTheBusiestDomains() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), new ManualClock(), b -> b.domain("hot.example", "20", "1h"),
                     "admin.listen", "127.0.0.1:0")) {
            for (int i = 0; i < 30; i++) {
                Dns.udp(s.address(), Dns.query(i, "n" + i + ".hot.example.", Type.A));
            }
            for (int i = 0; i < 5; i++) {
                Dns.udp(s.address(), Dns.query(i, "n" + i + ".cool.example.net.", Type.A));
            }
            JsonNode top = Await.result("the second domain's 5 queries in top", Duration.ofSeconds(5), () -> {
                JsonNode t = call(s, "GET", "/api/v1/top?n=2", null).body(); // the rings are drained four times a second
                return t.get("domains").size() == 2 && t.get("domains").get(1).get("queries").asInt() == 5 ? t : null;
            });
            JsonNode hot = top.get("domains").get(0);
            assertEquals("hot.example", hot.get("domain").asText(), top.toString());
            assertEquals(30, hot.get("queries").asInt());
            assertEquals(10, hot.get("refused").asInt());
            assertTrue(hot.get("limited").asBoolean());
            assertFalse(hot.get("flood").asBoolean(), "refused, but its answers were no flood of NXDOMAIN: " + hot);
            assertEquals(20, hot.get("limit").asInt());
            assertEquals("1h", hot.get("window").asText());
            assertTrue(top.get("domains").get(1).get("limit").isNull(), "unlimited: " + top);
            assertEquals("example.net", top.get("domains").get(1).get("domain").asText());
            JsonNode refused = call(s, "GET", "/api/v1/top?n=5&by=refused", null).body();
            assertEquals(1, refused.get("domains").size(), refused.toString());
        }
    }

    /** The busiest domains once {@code want} holds of the first, polling: the rings are drained four times a second. */
    private JsonNode topOnce(RunningSluice s, java.util.function.Predicate<JsonNode> want) throws Exception {
        return Await.result("the busiest domain as wanted", Duration.ofSeconds(5), () -> {
            JsonNode top = call(s, "GET", "/api/v1/top?n=5", null).body();
            return top.get("domains").size() > 0 && want.test(top.get("domains").get(0)) ? top : null;
        });
    }

    @Test
    void topCountsAsRefusedOnlyWhatAClientGotRefusedAndNamesDomainsNotClientNetworks() throws Exception {
        String[] budgets = {"admin.listen", "127.0.0.1:0", "limits.default.queries", "2", "limits.default.window", "1h",
            "limits.per-client.queries", "1", "limits.per-client.window", "1h"};
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), new ManualClock(), b -> b.set("dry-run", List.of("true")),
                     budgets)) {
            for (int i = 0; i < 4; i++) {
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(i, "n" + i + ".dry.example.", Type.A))));
            }
            JsonNode top = topOnce(s, d -> d.get("queries").asInt() == 4);
            assertEquals(1, top.get("domains").size(), "the domain alone, no client network: " + top);
            JsonNode dry = top.get("domains").get(0);
            assertEquals("dry.example", dry.get("domain").asText());
            assertEquals(0, dry.get("refused").asInt(), "a dry run refuses nobody: " + dry);
            assertFalse(dry.get("limited").asBoolean());
            assertEquals(3, s.sluice().metrics().count("limited_dry_run"), "once a query, over either budget or both");
        }
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), new ManualClock(), b -> { }, budgets)) {
            Dns.udp(s.address(), Dns.query(1, "a.client.example.", Type.A));
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.udp(s.address(), Dns.query(2, "b.client.example.", Type.A))));
            JsonNode top = topOnce(s, d -> d.get("queries").asInt() == 2);
            assertEquals(1, top.get("domains").size(), top.toString());
            assertEquals("client.example", top.get("domains").get(0).get("domain").asText());
            assertEquals(1, top.get("domains").get(0).get("refused").asInt(), "refused by its client's budget");
        }
    }

    @Test
    void reloadPutsTheFileInForceAndRuntimeLimitsWin() throws Exception {
        Path conf = dir.resolve("sluice.yml");
        Files.writeString(conf, "limits:\n  default: unlimited\n");
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), new ManualClock(), b -> b.configFile(conf),
                     "admin.listen", "127.0.0.1:0")) {
            call(s, "PUT", "/api/v1/limits/example.org", "{\"unlimited\": true}");
            Files.writeString(conf, "limits:\n  default: { queries: 1, window: 1h }\n");
            Reply r = call(s, "POST", "/api/v1/reload", null);
            assertEquals(200, r.status(), r.toString());
            assertTrue(r.body().get("changes").toString().contains("limits.default: unlimited -> 1 per 1h"), r.toString());
            assertEquals(Rcode.NOERROR, rcode(s, "a.example.com."));
            assertEquals(Rcode.REFUSED, rcode(s, "b.example.com."), "the file's new default");
            for (int i = 0; i < 3; i++) {
                assertEquals(Rcode.NOERROR, rcode(s, "x" + i + ".example.org."), "the runtime entry wins");
            }
            Files.writeString(conf, "limits:\n  default: { queries: many }\n");
            Reply bad = call(s, "POST", "/api/v1/reload", null);
            assertEquals(400, bad.status());
            assertTrue(bad.body().get("error").asText().contains(conf + " line 2: limits.default.queries"), bad.toString());
            assertEquals(Rcode.REFUSED, rcode(s, "c.example.com."), "nothing changed");
            assertEquals(1, s.sluice().metrics().count("reloads"));
            assertEquals(1, s.sluice().metrics().count("reload_failures"));
            // a reload that makes a new forwarding generation for the same upstream: /metrics still scrapes
            Files.writeString(conf, "limits:\n  default: { queries: 1, window: 1h }\ntimeout: 1s\n");
            assertEquals(200, call(s, "POST", "/api/v1/reload", null).status());
            HttpResponse<String> m = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + s.sluice().adminAddress().getPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, m.statusCode(), m.body());
            assertTrue(m.body().contains("sluice_upstream_latency_seconds_count{upstream=\"" + up.hostPort() + "\"}"),
                    m.body());
            JsonNode upstream = call(s, "GET", "/api/v1/upstreams", null).body().get("upstreams").get(0);
            long replies = upstream.get("replies").asLong();
            double seconds = upstream.get("latency-seconds").asDouble();
            String sumLine = m.body().lines().filter(l -> l.startsWith("sluice_upstream_latency_seconds_sum{")).findFirst()
                    .orElseThrow();
            double sum = Double.parseDouble(sumLine.substring(sumLine.lastIndexOf(' ') + 1));
            assertTrue(replies >= 2, upstream.toString());
            assertEquals(sum, seconds, sum * 1e-6 + 1e-9, "the histogram's sum, for means over an interval: " + upstream
                    + ", " + sumLine);
            // the smoothed RTT (retransmit's estimator), published by a loop's tick after a reply
            java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();
            Await.until("the upstream's RTT published", () -> {
                try {
                    rcode(s, "rtt" + n.incrementAndGet() + ".org."); // a domain of its own: a budget of its own
                    return call(s, "GET", "/api/v1/upstreams", null).body().get("upstreams").get(0)
                            .get("rtt-seconds").isNumber();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            double rtt = call(s, "GET", "/api/v1/upstreams", null).body().get("upstreams").get(0).get("rtt-seconds")
                    .asDouble();
            assertTrue(rtt > 0 && rtt < 1, "rtt-seconds " + rtt);
            String metrics = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + s.sluice().adminAddress().getPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
            assertTrue(metrics.contains("sluice_upstream_rtt_seconds{upstream=\"" + up.hostPort() + "\"}"), metrics);
        }
    }

    /** A reload that leaves a domain's budget alone leaves its count alone: a spent budget stays spent. */
    @Test
    void countersOfUnchangedBudgetsCarryOverAReload() throws Exception {
        Path conf = dir.resolve("carry.yml");
        Files.writeString(conf, "limits:\n  domains:\n    example.com: { queries: 2, window: 1h }\n");
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), new ManualClock(), b -> b.configFile(conf),
                     "admin.listen", "127.0.0.1:0")) {
            assertEquals(Rcode.NOERROR, rcode(s, "a.example.com."));
            assertEquals(Rcode.NOERROR, rcode(s, "b.example.com."));
            Files.writeString(conf, "limits:\n  domains:\n    example.com: { queries: 2, window: 1h }\n"
                    + "    example.net: { queries: 5, window: 1s }\n");
            Reply r = call(s, "POST", "/api/v1/reload", null);
            assertEquals("limits.domains.example.net: added, 5 per 1s", r.body().get("changes").get(0).asText(), r.toString());
            assertEquals(Rcode.REFUSED, rcode(s, "c.example.com."), "the two queries before the reload still count");
        }
    }

    @Test
    void cachedAnswersAreShownAndFlushedByNameTypeSubtreeOrAll() throws Exception {
        ManualClock clock = new ManualClock();
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), clock, b -> { }, "admin.listen", "127.0.0.1:0",
                     "cache.size", "1000")) {
            String[][] asked = {{"www.example.com.", "A"}, {"www.example.com.", "AAAA"}, {"a.b.example.com.", "A"},
                {"example.org.", "A"}};
            for (String[] q : asked) {
                ask(s, q[0], Type.value(q[1]));
            }
            assertEquals(4, asked(up));
            ask(s, "WWW.example.com.", Type.AAAA);
            assertEquals(4, asked(up), "answered from the cache");
            clock.advanceMillis(100_000);
            Reply shown = call(s, "GET", "/api/v1/cache/WWW.example.com", null);
            assertEquals(200, shown.status(), shown.toString());
            assertEquals("www.example.com", shown.body().get("name").asText());
            assertEquals(2, shown.body().get("answers").size(), shown.toString());
            java.util.Set<String> types = new java.util.HashSet<>();
            for (JsonNode a : shown.body().get("answers")) {
                types.add(a.get("type").asText());
                assertEquals("NOERROR", a.get("rcode").asText());
                assertEquals(1, a.get("records").asInt());
                assertEquals(200, a.get("ttl").asLong(), "300 s less the 100 s it was kept: " + a);
                assertFalse(a.get("stale").asBoolean());
            }
            assertEquals(java.util.Set.of("A", "AAAA"), types);
            assertEquals(0, call(s, "GET", "/api/v1/cache/example.com", null).body().get("answers").size(),
                    "exactly the name asked for");

            Reply aaaa = call(s, "DELETE", "/api/v1/cache/www.example.com?type=AAAA", null);
            assertEquals(200, aaaa.status(), aaaa.toString());
            assertEquals(1, aaaa.body().get("removed").asLong(), aaaa.toString());
            assertEquals("AAAA", aaaa.body().get("type").asText());
            ask(s, "www.example.com.", Type.A);
            assertEquals(4, asked(up), "the A answer stays");
            ask(s, "www.example.com.", Type.AAAA);
            assertEquals(5, asked(up), "the AAAA answer is asked for again");

            Reply name = call(s, "DELETE", "/api/v1/cache/WWW.Example.COM.", null);
            assertEquals(2, name.body().get("removed").asLong(), name.toString());
            assertTrue(name.body().get("type").isNull());
            assertFalse(name.body().get("subtree").asBoolean());
            assertEquals(0, call(s, "DELETE", "/api/v1/cache/example.com", null).body().get("removed").asLong(),
                    "no answer for example.com itself; the names under it only with subtree");
            Reply under = call(s, "DELETE", "/api/v1/cache/example.com?subtree=true", null);
            assertEquals(1, under.body().get("removed").asLong(), under.toString());
            ask(s, "a.b.example.com.", Type.A);
            assertEquals(6, asked(up));
            ask(s, "example.org.", Type.A);
            assertEquals(6, asked(up), "another domain's answers stay");

            Reply all = call(s, "DELETE", "/api/v1/cache", null);
            assertEquals(2, all.body().get("removed").asLong(), "a.b.example.com and example.org: " + all);
            ask(s, "example.org.", Type.A);
            assertEquals(7, asked(up));

            assertEquals(400, call(s, "DELETE", "/api/v1/cache/example.org?type=BOGUS", null).status());
            assertEquals(400, call(s, "DELETE", "/api/v1/cache/example.org?subtree=maybe", null).status());
            Reply typo = call(s, "DELETE", "/api/v1/cache/example.org?tpye=A", null);
            assertEquals(400, typo.status(), "a misspelt parameter would flush every type");
            assertTrue(typo.body().get("error").asText().contains("tpye"), typo.toString());
            assertEquals(400, call(s, "DELETE", "/api/v1/cache/a..example.org", null).status());
            Reply empty = call(s, "DELETE", "/api/v1/cache/", null);
            assertEquals(400, empty.status(), "an empty name is not every name");
            assertTrue(empty.body().get("error").asText().startsWith("a name is needed"), empty.body().toString());
            assertEquals(400, call(s, "GET", "/api/v1/cache/", null).status());
            assertEquals(400, call(s, "DELETE", "/api/v1/cache?type=A", null).status());
            assertEquals(405, call(s, "GET", "/api/v1/cache", null).status(), "no listing of the whole cache");
            assertEquals(405, call(s, "POST", "/api/v1/cache/example.org", null).status());
            ask(s, "example.org.", Type.A);
            assertEquals(7, asked(up), "refused flushes removed nothing");
        }
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "admin.listen", "127.0.0.1:0", "cache.size", "0")) {
            Reply off = call(s, "DELETE", "/api/v1/cache", null);
            assertEquals(409, off.status());
            assertTrue(off.body().get("error").asText().contains("cache.size"), off.toString());
        }
    }

    private static void ask(RunningSluice s, String name, int type) throws Exception {
        assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(7, name, type))), name);
    }

    private static int asked(TestUpstream up) {
        return up.udpQueries() + up.tcpQueries();
    }
}
