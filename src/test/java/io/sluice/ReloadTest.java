package io.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.config.Setting;
import io.sluice.config.SettingTable;
import io.sluice.config.Settings;
import io.sluice.testing.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a reload says it changed, key by key: every setting of the table, changed alone, is named
 * by its own key (as the file writes it), handed to the part the table names for it ({@link
 * Setting#applied}) and in force after the reload exactly when that is not a restart; the rest are
 * named as needing a restart and kept as they were.
 */
class ReloadTest {
    @TempDir
    Path dir;

    /** The running settings: token-bucket with a limit, so that a burst and the default's parts can change. */
    private static final Map<String, String> BASE = Map.of("upstreams", "127.0.0.1:5300",
            "limits.algorithm", "token-bucket", "limits.default.queries", "10");

    @Test
    void eachKeyChangedAloneIsNamedByItsKeyAndAppliedExactlyWhenLive() throws Exception {
        Path file = Files.writeString(dir.resolve("file"), "token\n");
        Map<String, String> other = new TreeMap<>();
        other.put("listen", "127.0.0.1:1054");
        other.put("upstreams", "127.0.0.2:53");
        other.put("upstream-tls-ca-file", file.toString()); // not read: no upstream is tls://
        other.put("upstream-policy", "random");
        other.put("allow-clients", "10.0.0.0/8");
        other.put("acl-action", "drop");
        other.put("cache.prefetch", "true");
        other.put("cache.networks-per-question", "8");
        other.put("proxy-protocol-from", "10.0.53.0/24");
        other.put("tls-listen", "127.0.0.1:8853");
        other.put("https-listen", "127.0.0.1:8443");
        other.put("tls-cert-file", file.toString());
        other.put("tls-key-file", file.toString());
        other.put("threads", "3");
        other.put("udp-steering", "hash");
        other.put("timeout", "1s");
        other.put("query-timeout", "5s");
        other.put("max-inflight", "100");
        other.put("max-tcp-connections", "10");
        other.put("tcp-idle-timeout", "5s");
        other.put("max-tcp-connections-per-client", "7");
        other.put("tcp-connection-rate-per-client", "20");
        other.put("max-tcp-queries-per-connection", "7");
        other.put("max-tcp-connection-duration", "7s");
        other.put("upstream-sockets", "4");
        other.put("upstream-socket-lifetime", "30s");
        other.put("randomize-case", "false");
        other.put("retransmit", "false");
        other.put("connection-exempt-clients", "10.1.0.0/16");
        other.put("coalesce", "false");
        other.put("limits.max-inflight-per-domain", "7");
        other.put("coalesce-max-waiters", "5");
        other.put("max-udp-size", "1400");
        other.put("max-fails", "5");
        other.put("health-check-interval", "2s");
        other.put("health-check-name", "example.com.");
        other.put("health-check-type", "A");
        other.put("health-check-must-resolve", "true");
        other.put("limits.default", "unlimited");
        other.put("limits.default.queries", "20");
        other.put("limits.default.window", "2s");
        other.put("limits.algorithm", "sliding-window");
        other.put("limits.burst", "20");
        other.put("action", "drop");
        other.put("dry-run", "true");
        other.put("slip", "2");
        other.put("ecs.mode", "add");
        other.put("ecs.ipv4-prefix", "16");
        other.put("ecs.ipv6-prefix", "48");
        other.put("ecs.upstreams", "127.0.0.1:5300");
        other.put("limits.verified-share", "0.5");
        other.put("cookies.enabled", "false");
        other.put("cookies.secret-file", file.toString());
        other.put("limits.max-domains", "1000");
        other.put("limits.janitor-interval", "10s");
        other.put("limits.per-client.queries", "5");
        other.put("limits.per-client.window", "2s");
        other.put("limits.per-client.ipv4-prefix", "16");
        other.put("limits.per-client.ipv6-prefix", "48");
        other.put("limits.flood.detect", "false");
        other.put("limits.flood.nxdomain-ratio", "0.8");
        other.put("limits.flood.min-answers", "50");
        other.put("limits.flood.budget", "0.2");
        other.put("limits.flood.exempt-domains", "zen.spamhaus.org");
        other.put("limits.flood.pressure", "0.5");
        other.put("limits.reverse-ipv4-prefix", "16");
        other.put("limits.reverse-ipv6-prefix", "32");
        other.put("limits.exempt-clients", "10.0.0.0/8");
        other.put("cache.size", "1000");
        other.put("cache.max-bytes", "1048576");
        other.put("cache.max-ttl", "1h");
        other.put("cache.max-negative-ttl", "10m");
        other.put("cache.servfail-ttl", "1s");
        other.put("cache.stale-ttl", "1h");
        other.put("cache.stale-refresh-time", "10s");
        other.put("cache.stale-when-limited", "false");
        other.put("public-suffix-list", file.toString());
        other.put("metrics", "127.0.0.1:9999");
        other.put("log-level", "debug");
        other.put("admin.listen", "127.0.0.1:8099");
        other.put("admin.token-file", file.toString());
        other.put("backend", "redis");
        other.put("redis", "redis://127.0.0.1:6380");
        other.put("redis-cluster", "127.0.0.1:7000");
        other.put("redis-mode", "async");
        other.put("redis-timeout", "100ms");
        other.put("redis-failure", "open");
        other.put("sync-interval", "100ms");
        other.put("state-file", dir.resolve("state.dat").toString());
        other.put("reset-corrupt-state-file", "true");
        other.put("dnstap.socket", dir.resolve("other.sock").toString());
        other.put("dnstap.identity", "resolver-2");
        other.put("dnstap.version", "2");
        other.put("dnstap.queue-size", "1024");
        other.put("dnstap.messages", "client-query");
        // dnstap's keys change something only while it is on: they are changed from a running dnstap
        Map<String, String> dnstapOn = Map.of("dnstap.socket", dir.resolve("dnstap.sock").toString());

        Settings running = settings(Map.of());
        List<String> wrong = new ArrayList<>();
        for (Setting<?> s : SettingTable.ALL) {
            String value = other.get(s.key());
            assertTrue(value != null, s.key() + ": a new key, give it another value here");
            Map<String, String> base = s.key().startsWith("dnstap.") ? dnstapOn : Map.of();
            Map<String, String> changed = new HashMap<>(base);
            changed.put(s.key(), value);
            Reload r = Reload.between(base.isEmpty() ? running : settings(base), settings(changed));
            List<String> applied = new ArrayList<>();
            List<String> elsewhere = new ArrayList<>(); // applied, by a part other than the one declared
            r.changes().forEach((part, lines) -> lines.forEach(line ->
                    (part == s.applied() ? applied : elsewhere).add(line.substring(0, line.indexOf(": ")))));
            String named = s.key().startsWith("limits.default") ? "limits.default" : s.key(); // one line for the budget
            List<String> expected = List.of(named);
            Object kept = r.applied().value(s);
            Object wanted = (s.live() ? settings(changed) : base.isEmpty() ? running : settings(base)).value(s);
            if (!(s.live() ? applied : r.needRestart()).equals(expected) || !(s.live() ? r.needRestart() : applied).isEmpty()
                    || !elsewhere.isEmpty() || !java.util.Objects.equals(kept, wanted)) {
                wrong.add(s.key() + " (" + s.applied() + "): applied " + applied + ", elsewhere " + elsewhere
                        + ", restart " + r.needRestart() + ", in force " + kept + " (wanted " + wanted + ")");
            }
        }
        assertEquals(List.of(), wrong);
    }

    @Test
    void aLogLevelTakenOutOfTheFileGoesBackToTheDefault() {
        ch.qos.logback.classic.Logger root = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
                org.slf4j.Logger.ROOT_LOGGER_NAME);
        ch.qos.logback.classic.Level before = root.getLevel();
        try {
            LogLevel.apply("debug");
            assertEquals(ch.qos.logback.classic.Level.DEBUG, root.getLevel());
            LogLevel.apply(null);
            String env = System.getenv("SLUICE_LOG_LEVEL");
            assertEquals(ch.qos.logback.classic.Level.toLevel(env, ch.qos.logback.classic.Level.INFO), root.getLevel());
        } finally {
            root.setLevel(before);
        }
    }

    private Settings settings(Map<String, String> change) throws Exception {
        Settings.Builder b = new Settings.Builder();
        for (Map.Entry<String, String> e : BASE.entrySet()) {
            b.set(e.getKey(), List.of(e.getValue()));
        }
        // A certificate that loads, so that tls-listen may be given alone; unused while it is not.
        Path[] tls = Files.exists(dir.resolve("cert.pem")) ? new Path[] {dir.resolve("cert.pem"), dir.resolve("key.pem")}
                : TestCertificates.selfSigned(dir, "reload");
        b.set("tls-cert-file", List.of(tls[0].toString()));
        b.set("tls-key-file", List.of(tls[1].toString()));
        for (Map.Entry<String, String> e : change.entrySet()) {
            b.set(e.getKey(), List.of(e.getValue()));
        }
        return b.build();
    }
}
