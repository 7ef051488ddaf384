package io.sluice.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.limit.Clock;
import io.sluice.limit.Limits;
import io.sluice.testing.TestSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The YAML file: every key read, and each mistake named with its line. */
class ConfigFileTest {
    @TempDir
    Path dir;

    private Settings load(String yaml) throws Exception {
        return TestSettings.fromYaml(dir, yaml);
    }

    @Test
    void theSampleConfigurationLoads() throws Exception {
        Settings.Builder b = new Settings.Builder();
        ConfigFile.apply(Path.of("conf/sluice.yml"), b);
        Settings s = b.set("upstreams", List.of("127.0.0.1:53")).build();
        assertEquals(Duration.ofSeconds(2), s.timeout());
        assertTrue(s.limits().off(), "the sample file limits nothing until told to");
    }

    @Test
    void readsTheBackendKeys() throws Exception {
        Settings s = load("""
                limits: { default: { queries: 5 } }
                backend: redis
                redis: rediss://cache.example:6380/2
                redis-cluster: [10.0.0.1:7000, "10.0.0.2:7001"]
                redis-mode: async
                redis-timeout: 20ms
                redis-failure: closed
                sync-interval: 100ms
                state-file: /var/lib/sluice/counters.dat
                reset-corrupt-state-file: true
                """);
        BackendSettings b = s.backend();
        assertEquals(BackendSettings.Kind.REDIS, b.kind());
        assertEquals("rediss://cache.example:6380/2", b.redis().toString());
        assertEquals(List.of("10.0.0.1:7000", "10.0.0.2:7001"), b.redisCluster());
        assertEquals(BackendSettings.RedisMode.ASYNC, b.redisMode());
        assertEquals(Duration.ofMillis(20), b.redisTimeout());
        assertEquals(BackendSettings.RedisFailure.CLOSED, b.redisFailure());
        assertEquals(Duration.ofMillis(100), b.syncInterval());
        assertEquals(Path.of("/var/lib/sluice/counters.dat"), b.stateFile());
        assertTrue(b.resetCorruptStateFile());

        assertEquals(LimitSettings.Algorithm.TOKEN_BUCKET,
                load("backend: redis\nlimits: { algorithm: token-bucket }\n").limits().algorithm(),
                "every algorithm runs on every backend");
        ConfigException e = assertThrows(ConfigException.class, () -> load("redis: http://cache.example\n"));
        assertTrue(e.getMessage().contains("line 1") && e.getMessage().contains("redis"), e.getMessage());
    }

    @Test
    void readsEveryKey() throws Exception {
        Settings s = load("""
                listen: ["127.0.0.1:5300", "[::1]:5300"]
                upstreams: [127.0.0.1:53]
                threads: 3
                timeout: 750ms
                max-inflight: 1000
                max-tcp-connections: 10
                tcp-idle-timeout: 3s
                upstream-sockets: 2
                udp-steering: hash
                max-fails: 5
                health-check-interval: 2s
                limits:
                  default: { queries: 100, window: 2s }
                  domains:
                    example.com: { queries: 10, window: 1s }
                    other.example: { queries: 7 }
                    trusted.example: unlimited
                  exempt-clients: [10.0.0.0/8, "::1/128", 192.0.2.7]
                  algorithm: token-bucket
                  burst: 300
                  max-domains: 5000
                  janitor-interval: 1s
                action: truncate
                dry-run: true
                """);
        assertEquals(2, s.listen().size());
        assertEquals(3, s.threads());
        assertEquals(Duration.ofMillis(750), s.timeout());
        assertEquals(Settings.UdpSteering.HASH, s.udpSteering());
        LimitSettings l = s.limits();
        assertEquals(new LimitSettings.DomainLimit(100, Duration.ofSeconds(2)), l.defaultLimit());
        assertEquals(new LimitSettings.DomainLimit(10, Duration.ofSeconds(1)), l.domains().get("example.com"));
        assertEquals(new LimitSettings.DomainLimit(7, Duration.ofSeconds(2)), l.domains().get("other.example"),
                "an override without a window takes the default window");
        assertTrue(l.domains().get("trusted.example").unlimited());
        assertEquals("[10.0.0.0/8, ::1/128, 192.0.2.7/32]", l.exemptClients().toString());
        assertEquals(LimitSettings.Algorithm.TOKEN_BUCKET, l.algorithm());
        assertEquals(300, l.burst());
        assertEquals(5000, l.maxDomains());
        assertEquals(LimitSettings.Action.TRUNCATE, l.action());
        assertTrue(l.dryRun());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "timeout: 5x                                   | line 1: timeout: invalid duration '5x'",
        "timeout: 900000000h                           | line 1: timeout: duration '900000000h' is longer than ten years",
        "upstream-socket-lifetime: 2s                  | line 1: upstream-socket-lifetime: at least 1s per upstream socket (8s",
        "threads: 0                                    | line 1: threads: 0 is out of range",
        "listen: localhost:53                          | line 1: listen: 'localhost:53' is not an IP address",
        "upstreams: [1.2.3.4:70000]                    | line 1: upstreams: invalid address",
        "colour: blue                                  | line 1: colour: unknown key",
        "limts:\\n  default: unlimited                   | line 1: limts: unknown key; did you mean limits?",
        "limits:\\n  defualt: { queries: 1 }            | line 2: limits.defualt: unknown key; did you mean limits.default?",
        "timout: 1s                                    | line 1: timout: unknown key; did you mean timeout?",
        "timeout: 1s\\ntimeout: 2s                     | line 2: timeout: given twice (first at line 1)",
        "limits:\\n  domains:\\n    a.com: unlimited\\n    a.com: unlimited | line 4: limits.domains.a.com: given twice (first at line 3)",
        "limits:\\n  exempt-clients: [10.0.0.1/8]       | line 2: limits.exempt-clients: '10.0.0.1/8' is not a network address: host bits are set (did you mean 10.0.0.0/8, or 10.0.0.1 alone?)",
        "limits:\\n  burst: 5                          | line 2: limits.burst: only token-bucket has a burst",
        "allow-clients: []                             | line 1: allow-clients: needs at least one network",
        "udp-steering: on                              | line 1: udp-steering: unknown name 'on' (one of auto, cpu, hash)",
        "# a\\n# b\\naction: reject                       | line 3: action: unknown name 'reject' (one of refused, nxdomain, drop, truncate)",
        "limits:\\n  algorithm: leaky                     | line 2: limits.algorithm: unknown name 'leaky'",
        "limits:\\n  default: { queries: -1 }             | line 2: limits.default.queries: -1 is out of range",
        "limits:\\n  default: { queries: 1, size: 2 }     | line 2: limits.default.size: unknown key",
        "limits:\\n  default: lots                        | line 2: limits.default: expected 'unlimited'",
        "limits:\\n  domains:\\n    a.com: { window: 1s }   | line 3: limits.domains.a.com: needs 'queries'",
        "limits:\\n  domains:\\n    a.com: many             | line 3: limits.domains.a.com: expected 'unlimited'",
        "limits:\\n  exempt-clients: [10.0.0.0/33]         | line 2: limits.exempt-clients: 33 is out of range",
        "limits:\\n  exempt-clients: [somewhere]          | line 2: limits.exempt-clients: 'somewhere' is not an address",
        "dry-run: maybe                                | line 1: dry-run: invalid boolean 'maybe'",
        "cache:\\n  max-bytes: 68719476736             | line 2: cache.max-bytes: 68719476736 is more than half the heap",
        "public-suffix-list: /no/such/file             | line 1: public-suffix-list: cannot read",
        "timeout: [1s                                  | not valid YAML",
        "- just\\n- a list                              | expected a mapping of settings",
    })
    void mistakesNameTheLineAndKey(String yaml, String expected) {
        ConfigException e = assertThrows(ConfigException.class, () -> load(yaml.replace("\\n", "\n").strip()));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
        assertTrue(e.getMessage().startsWith(dir.resolve("sluice.yml").toString()), e.getMessage());
    }

    /** The rings and the index are taken at start together: each within half the heap is not enough. */
    @Test
    void theCachesAnswersAndIndexTogetherFitHalfTheHeap() throws Exception {
        long bytes = Runtime.getRuntime().maxMemory() / 2 - (1 << 20);
        Settings fits = load("cache:\n  size: 4000\n  max-bytes: " + bytes + "\n");
        assertEquals(bytes, fits.cache().maxBytes());
        ConfigException e = assertThrows(ConfigException.class,
                () -> load("cache:\n  size: 1000000\n  max-bytes: " + bytes + "\n"));
        assertTrue(e.getMessage().contains("line 3: cache.max-bytes: " + bytes + " is more than half the heap"),
                e.getMessage());
        assertTrue(e.getMessage().contains("20000000 of index"), e.getMessage());
    }

    /** Overrides are checked against the suffix list once it is loaded, and still name their line. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "www.example.com | line 4: limits.domains.www.example.com: not a registrable domain (www.example.com counts for example.com)",
        "co.uk           | line 4: limits.domains.co.uk: co.uk is a public suffix",
    })
    void overridesTheSuffixListRejectsNameTheirLine(String name, String expected) throws Exception {
        Settings s = load("limits:\n  default: { queries: 10 }\n  domains:\n    " + name + ": { queries: 5 }\n");
        ConfigException e = assertThrows(ConfigException.class, () -> Limits.from(s.limits(), Clock.system()));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
        assertTrue(e.getMessage().startsWith(dir.resolve("sluice.yml").toString()), e.getMessage());
    }

    /** 150 labels, 303 characters: past 255 octets, a name no query can carry; it read past a buffer. */
    @Test
    void anOverrideOver255OctetsNamesItsLine() throws Exception {
        String name = "a.".repeat(150) + "com";
        Settings s = load("limits:\n  default: { queries: 10 }\n  domains:\n    " + name + ": { queries: 5 }\n");
        ConfigException e = assertThrows(ConfigException.class, () -> Limits.from(s.limits(), Clock.system()));
        assertTrue(e.getMessage().contains("line 4") && e.getMessage().contains("255"), e.getMessage());
    }

    @Test
    void thePerClientSectionLoads() throws Exception {
        Settings s = load("limits:\n  per-client: { queries: 50, window: 2s, ipv4-prefix: 16, ipv6-prefix: 48 }\n");
        assertEquals(new LimitSettings.PerClient(new LimitSettings.DomainLimit(50, java.time.Duration.ofSeconds(2)), 16, 48),
                s.limits().perClient());
        assertTrue(!s.limits().off(), "a per-client budget turns the limits on");
    }

    @Test
    void theAdminSectionLoads() throws Exception {
        Settings s = load("admin:\n  listen: 8053\n");
        assertEquals(new java.net.InetSocketAddress("127.0.0.1", 8053), s.admin());
    }

    /** Found by ParsersFuzzTest#configLoader: SnakeYAML Engine throws IllegalArgumentException for such a tag. */
    @Test
    void aTagWithABadEscapeIsRefusedAsYaml() {
        ConfigException e = assertThrows(ConfigException.class, () -> load("!%E"));
        assertTrue(e.getMessage().contains("not valid YAML"), e.getMessage());
    }

    @Test
    void aUnicodeOverrideIsConvertedWithIdna() throws Exception {
        Settings s = load("limits:\n  domains:\n    Bücher.DE: { queries: 5 }\n");
        assertEquals(java.util.Set.of("xn--bcher-kva.de"), s.limits().domains().keySet());
    }

    @Test
    void everyKnownKeyIsOneTheBuilderTakes() {
        for (String key : Settings.Builder.KEYS) {
            ConfigException e = assertThrows(ConfigException.class,
                    () -> new Settings.Builder().set(key, List.of("[", "[")), key);
            assertTrue(!e.getMessage().equals(Settings.Builder.UNKNOWN_KEY), key);
        }
    }

    @Test
    void editDistanceCountsOneCharacterChanges() {
        assertEquals(1, ConfigFile.editDistance("limts", "limits"));
        assertEquals(2, ConfigFile.editDistance("defualt", "default"));
        assertEquals(0, ConfigFile.editDistance("timeout", "timeout"));
    }

    @Test
    void aRepeatedKeyInsideAnOverrideNamesItsPlaceOnce() throws Exception {
        ConfigException e = assertThrows(ConfigException.class,
                () -> load("limits:\n  domains:\n    a.com: { queries: 1, queries: 2 }\n"));
        String file = dir.resolve("sluice.yml").toString();
        assertTrue(e.getMessage().startsWith(file + " line 3: limits.domains.a.com.queries: given twice"), e.getMessage());
        assertEquals(e.getMessage().indexOf(file), e.getMessage().lastIndexOf(file), e.getMessage());
    }

    @Test
    void overridesThatDifferOnlyInCaseOrIdnaAreTheSameDomain() {
        ConfigException e = assertThrows(ConfigException.class,
                () -> load("limits:\n  domains:\n    bücher.de: unlimited\n    XN--BCHER-KVA.de: unlimited\n"));
        assertTrue(e.getMessage().contains("line 4: limits.domains.XN--BCHER-KVA.de: the same domain as"), e.getMessage());
    }

    @Test
    void anUpstreamGivenTwiceIsAnError() {
        Settings.Builder b = new Settings.Builder();
        ConfigException e = assertThrows(ConfigException.class, () -> {
            ConfigFile.apply("upstreams: [127.0.0.1:53, 127.0.0.2:53, 127.0.0.1:53]\n", "sluice.yml", b);
            b.build();
        });
        assertTrue(e.getMessage().endsWith("line 1: upstreams: 127.0.0.1:53 is given twice"), e.getMessage());
    }

    @Test
    void anEmptySectionIsTheDefaultsAndAScalarOneIsAnError() throws Exception {
        assertTrue(load("limits:\n").limits().off());
        ConfigException e = assertThrows(ConfigException.class, () -> load("limits: 5\n"));
        assertTrue(e.getMessage().contains("line 1: limits: expected a mapping of settings"), e.getMessage());
        ConfigException admin = assertThrows(ConfigException.class, () -> load("admin: 8053\n"));
        assertTrue(admin.getMessage().endsWith("line 1: admin: expected a mapping of settings, such as admin: { listen: HOST:PORT }"),
                admin.getMessage());
    }
}
