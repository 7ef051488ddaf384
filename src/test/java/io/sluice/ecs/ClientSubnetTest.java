package io.sluice.ecs;

import static io.sluice.ecs.SubnetClients.address;
import static io.sluice.ecs.SubnetClients.subnetOf;
import static io.sluice.ecs.SubnetClients.tcpFrom;
import static io.sluice.ecs.SubnetClients.udpFrom;
import static io.sluice.ecs.SubnetClients.withSubnet;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.limit.ManualClock;
import io.sluice.testing.Dns;
import io.sluice.testing.DohClients;
import io.sluice.testing.PowerDnsServer;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestCertificates;
import io.sluice.testing.TestUpstream;
import io.sluice.transport.SocketProtocol;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xbill.DNS.ClientSubnetOption;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.GenericEDNSOption;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.TXTRecord;
import org.xbill.DNS.Type;

/**
 * EDNS Client Subnet end to end, in front of a real PowerDNS whose LUA records answer by the subnet
 * they are told (127.0.1.0/24 gets 192.0.2.1, anyone else 192.0.2.2): clients on two /24s of 127/8.
 */
class ClientSubnetTest {
    private static final String WWW = "www." + PowerDnsServer.ZONE;
    private static final String WHO = "who." + PowerDnsServer.ZONE;

    @TempDir
    Path dir;
    private final ManualClock clock = new ManualClock();
    private PowerDnsServer pdns;

    @BeforeEach
    void pdns() throws Exception {
        pdns = PowerDnsServer.start(Files.createDirectories(dir.resolve("pdns")));
    }

    @AfterEach
    void stop() throws Exception {
        pdns.close();
    }

    private RunningSluice sluice(String... keyValues) throws Exception {
        return RunningSluice.startFor(List.of(pdns.hostPort()), clock, b -> { }, keyValues);
    }

    @Test
    void addGivesClientsOnTwoSubnetsTheirOwnAnswersOverUdpAndTcpColdAndWarm() throws Exception {
        try (RunningSluice s = sluice("ecs.mode", "add", "cache.size", "1000")) {
            for (int round = 0; round < 3; round++) {
                int id = 10 * round;
                assertEquals("192.0.2.1", address(udpFrom("127.0.1.7", s, Dns.queryWithOpt(id, WWW, Type.A, List.of()))));
                assertEquals("192.0.2.2", address(udpFrom("127.0.2.7", s, Dns.queryWithOpt(id + 1, WWW, Type.A, List.of()))));
                assertEquals("192.0.2.1", address(tcpFrom("127.0.1.8", s, Dns.query(id + 2, WWW, Type.A))));
                assertEquals("192.0.2.2", address(tcpFrom("127.0.2.8", s, Dns.query(id + 3, WWW, Type.A))));
            }
            Message who = udpFrom("127.0.1.200", s, Dns.queryWithOpt(99, WHO, Type.TXT, List.of()));
            assertEquals("127.0.1.0/24", ((TXTRecord) who.getSection(Section.ANSWER).get(0)).getStrings().get(0),
                    "the upstream saw the client's /24");
            assertNull(subnetOf(who), "an option sluice added is not the client's to see");
            Message noEdns = udpFrom("127.0.1.7", s, Dns.query(100, WWW, Type.A));
            assertNull(noEdns.getOPT(), "nor an OPT record the client's query did not have");
            assertEquals("192.0.2.1", address(noEdns));
            assertEquals(14, s.sluice().metrics().count("ecs", "action", "added"));
            assertEquals(8, s.sluice().metrics().count("cache_hits"), "the warm rounds from the cache, each subnet its own");
        }
    }

    /** kdig from {@code source} over DoT or DoH (+tls, +https), the A record it printed. */
    private static String kdigFrom(String source, int port, String transport) throws Exception {
        DohClients.Run r = DohClients.run("kdig", "@127.0.0.1", "-p", String.valueOf(port), "-b", source, transport,
                "+short", WWW, "A");
        assertEquals(0, r.exit(), r.output());
        return r.output().strip();
    }

    @Test
    void addGivesEachSubnetItsAnswerOverDotAndDohToo() throws Exception {
        DohClients.assumeInstalled();
        Path[] cert = TestCertificates.selfSigned(Files.createDirectories(dir.resolve("tls")), "ecs");
        try (RunningSluice s = sluice("ecs.mode", "add", "cache.size", "1000", "tls-listen", "127.0.0.1:0",
                "https-listen", "127.0.0.1:0", "tls-cert-file", cert[0].toString(), "tls-key-file", cert[1].toString())) {
            int dot = s.sluice().addresses(SocketProtocol.DOT).get(0).getPort();
            int doh = s.sluice().addresses(SocketProtocol.DOH).get(0).getPort();
            for (int round = 0; round < 2; round++) { // cold, then warm
                assertEquals("192.0.2.1", kdigFrom("127.0.1.7", dot, "+tls"));
                assertEquals("192.0.2.2", kdigFrom("127.0.2.7", dot, "+tls"));
                assertEquals("192.0.2.1", kdigFrom("127.0.1.7", doh, "+https"));
                assertEquals("192.0.2.2", kdigFrom("127.0.2.7", doh, "+https"));
            }
        }
    }

    @Test
    void anAnswerWithScopeZeroIsServedToEveryNetworkFromTheCache() throws Exception {
        try (RunningSluice s = sluice("ecs.mode", "add", "cache.size", "1000")) {
            String ns = "ns1." + PowerDnsServer.ZONE; // a plain record: PowerDNS answers it with scope 0
            assertEquals("127.0.0.1", address(udpFrom("127.0.1.7", s, Dns.queryWithOpt(1, ns, Type.A, List.of()))));
            Message other = udpFrom("127.0.2.7", s, withSubnet(2, ns, Type.A, "127.0.2.0", 24));
            assertEquals("127.0.0.1", address(other));
            assertEquals(1, s.sluice().metrics().count("cache_hits"), "the second network from the cache");
            assertEquals(InetAddress.getByName("127.0.2.0"), subnetOf(other).getAddress(), "with its own option");
            assertEquals(0, subnetOf(other).getScopePrefixLength());
            udpFrom("127.0.1.7", s, Dns.queryWithOpt(3, WWW, Type.A, List.of()));
            assertEquals("192.0.2.2", address(udpFrom("127.0.2.7", s, Dns.queryWithOpt(4, WWW, Type.A, List.of()))),
                    "an answer with a scope of 24 is not");
            assertEquals(1, s.sluice().metrics().count("cache_hits"));
        }
    }

    @Test
    void aClientsOwnOptionIsCutPassedOrReplacedAndAlwaysEchoedWithTheUpstreamsScope() throws Exception {
        try (RunningSluice s = sluice("ecs.mode", "add")) {
            Message m = udpFrom("127.0.2.9", s, withSubnet(1, WHO, Type.TXT, "127.0.1.77", 32));
            assertEquals("127.0.1.0/24", ((TXTRecord) m.getSection(Section.ANSWER).get(0)).getStrings().get(0),
                    "a /32 cut to the /24 sent at most");
            ClientSubnetOption echoed = subnetOf(m);
            assertEquals(32, echoed.getSourcePrefixLength(), "the client's own source");
            assertEquals(InetAddress.getByName("127.0.1.77"), echoed.getAddress());
            assertEquals(24, echoed.getScopePrefixLength(), "the upstream's scope");

            Message zero = udpFrom("127.0.1.9", s, withSubnet(2, WWW, Type.A, "0.0.0.0", 0));
            assertEquals("192.0.2.2", address(zero), "source 0: the client's address goes nowhere");
            assertEquals(0, subnetOf(zero).getSourcePrefixLength());
        }
        try (RunningSluice s = sluice("ecs.mode", "pass")) {
            Message m = udpFrom("127.0.1.9", s, withSubnet(3, WWW, Type.A, "127.0.2.0", 24));
            assertEquals("192.0.2.2", address(m), "pass: the client's option as sent");
            assertEquals(24, subnetOf(m).getScopePrefixLength());
            assertNull(subnetOf(udpFrom("127.0.1.9", s, Dns.queryWithOpt(4, WHO, Type.TXT, List.of()))), "none added");
        }
        try (RunningSluice s = sluice("ecs.mode", "replace", "ecs.ipv4-prefix", "16")) {
            Message m = udpFrom("127.0.1.9", s, withSubnet(5, WHO, Type.TXT, "127.0.2.0", 24));
            assertEquals("127.0.0.0/16", ((TXTRecord) m.getSection(Section.ANSWER).get(0)).getStrings().get(0),
                    "replaced by the client's own network, at the prefix set");
            assertEquals(InetAddress.getByName("127.0.2.0"), subnetOf(m).getAddress(), "its own option echoed");
            assertEquals(1, s.sluice().metrics().count("ecs", "action", "replaced"));
        }
    }

    @Test
    void onlyTheUpstreamsListedAreSentClientSubnet() throws Exception {
        try (TestUpstream plain = new TestUpstream();
             RunningSluice s = RunningSluice.startFor(List.of(plain.hostPort(), pdns.hostPort()), clock, b -> { },
                     "ecs.mode", "add", "ecs.upstreams", pdns.hostPort(), "timeout", "300ms", "retransmit", "false")) {
            Message first = udpFrom("127.0.2.7", s, Dns.queryWithOpt(1, WWW, Type.A, List.of()));
            assertEquals("192.0.2.1", address(first), "the first upstream's fixed answer");
            assertTrue(Dns.parse(plain.lastQuery()).getOPT().getOptions(EDNSOption.Code.CLIENT_SUBNET).isEmpty(),
                    "an upstream not in ecs.upstreams is not sent the client's network");
            plain.mode(TestUpstream.Mode.SILENT);
            Message second = udpFrom("127.0.2.7", s, Dns.queryWithOpt(2, WHO, Type.TXT, List.of()));
            assertEquals("127.0.2.0/24", ((TXTRecord) second.getSection(Section.ANSWER).get(0)).getStrings().get(0),
                    "the next one is: the option put back");
        }
    }

    @Test
    void ecsUpstreamsNamesOnlyUpstreams() {
        String error = org.junit.jupiter.api.Assertions.assertThrows(io.sluice.config.ConfigException.class,
                () -> sluice("ecs.upstreams", "192.0.2.53:53").close()).getMessage();
        assertTrue(error.contains("ecs.upstreams: 192.0.2.53:53 is not one of upstreams"), error);
    }

    @Test
    void offSendsNoClientsAddressAndAReloadTurnsItOn() throws Exception {
        Path conf = dir.resolve("sluice.yml");
        Files.writeString(conf, "ecs:\n  mode: off\n");
        try (RunningSluice s = RunningSluice.startFor(List.of(pdns.hostPort()), clock, b -> b.configFile(conf))) {
            Message m = udpFrom("127.0.1.9", s, Dns.queryWithOpt(1, WWW, Type.A, List.of()));
            assertEquals("192.0.2.2", address(m), "the upstream sees sluice's address");
            assertTrue(s.sluice().metricsText().contains("sluice_ecs_mode{mode=\"off\"} 1"), s.sluice().metricsText());
            Files.writeString(conf, "ecs:\n  mode: add\n");
            assertTrue(String.join("\n", s.sluice().reload()).contains("ecs.mode"));
            assertEquals("192.0.2.1", address(udpFrom("127.0.1.9", s, Dns.queryWithOpt(2, WWW, Type.A, List.of()))));
        }
    }

    @Test
    void anOptionRfc7871ForbidsIsFormerrAndNeverForwarded() throws Exception {
        try (RunningSluice s = sluice("ecs.mode", "pass")) {
            byte[][] bad = {
                    {0, 3, 24, 0, 1, 2, 3}, // family 3
                    {0, 1, 33, 0, 127, 0, 1, 1, 1}, // longer than an IPv4 address
                    {0, 1, 24, 0, 127, 0, 1, 9}, // an octet past the prefix
                    {0, 1, 20, 0, 127, 0, 31}, // bits past the prefix
            };
            for (byte[] data : bad) {
                byte[] q = Dns.queryWithOpt(1, WWW, Type.A, List.of(new GenericEDNSOption(EDNSOption.Code.CLIENT_SUBNET, data)));
                Message m = Dns.parse(Dns.udp(s.address(), q));
                assertEquals(Rcode.FORMERR, m.getRcode());
            }
            byte[] twice = Dns.queryWithOpt(2, WWW, Type.A, List.of(new ClientSubnetOption(24, InetAddress.getByName("127.0.1.0")),
                    new ClientSubnetOption(24, InetAddress.getByName("127.0.2.0"))));
            assertEquals(Rcode.FORMERR, Dns.rcode(Dns.udp(s.address(), twice)), "two Client Subnet options");
            assertEquals(5, s.sluice().metrics().count("ecs", "action", "malformed"));
        }
    }
}
