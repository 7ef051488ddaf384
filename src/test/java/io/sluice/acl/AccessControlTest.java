package io.sluice.acl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.config.Network;
import io.sluice.config.SettingTable;
import io.sluice.limit.ManualClock;
import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/** Who may use the forwarder: over real sockets from 127.0.0.1, with allow-clients set to exclude it or not. */
class AccessControlTest {
    @TempDir
    Path dir;

    @Test
    void theDefaultAnswersLoopbackClients() throws Exception {
        try (TestUpstream up = new TestUpstream(); RunningSluice s = RunningSluice.start(List.of(up))) {
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(1, "in.example.", Type.A))));
            assertEquals(0, s.sluice().metrics().count("acl_denied"));
            assertNull(s.sluice().exposureWarning(), "127.0.0.1 is not reachable from the Internet");
        }
    }

    @Test
    void aClientOutsideAllowClientsIsRefusedNeverForwardedNeverCounted() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "allow-clients", "10.0.0.0/8",
                     "limits.default.queries", "1", "limits.default.window", "1h")) {
            for (int i = 0; i < 3; i++) {
                byte[] udp = Dns.udp(s.address(), Dns.queryWithOpt(i, "out.example.com.", Type.A, List.of()));
                Message m = Dns.parse(udp);
                assertEquals(Rcode.REFUSED, m.getRcode());
                assertEquals("out.example.com.", m.getQuestion().getName().toString(), "the question echoed");
                assertNotNull(m.getOPT(), "an EDNS query gets an OPT back");
                try (Socket c = new Socket(s.address().getAddress(), s.address().getPort())) {
                    c.setSoTimeout(5000);
                    assertEquals(-1, c.getInputStream().read(), "a TCP connection from outside is closed at once");
                }
            }
            byte[] malformed = HexFormat.of().parseHex("0a0b01000000000000000000"); // no question
            assertNull(Dns.udp(s.address(), malformed, 300), "junk from outside gets nothing, not FORMERR");
            assertEquals(0, up.udpQueries() + up.tcpQueries(), "nothing reached the upstream");
            assertEquals(7, s.sluice().metrics().count("acl_denied"));
            assertEquals(0, s.sluice().metrics().count("formerr"));
            assertEquals(0, s.sluice().metrics().count("limited"), "not counted against the domain");
            assertEquals(0, s.sluice().limits().tracked());
        }
    }

    @Test
    void aclActionDropAnswersNothing() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "allow-clients", "192.0.2.0/24", "acl-action", "drop")) {
            assertNull(Dns.udp(s.address(), Dns.query(1, "dropped.example.", Type.A), 300));
            assertEquals(1, s.sluice().metrics().count("acl_denied"));
            assertEquals(0, up.udpQueries());
        }
    }

    @Test
    void aReloadPutsNewClientRulesInForceForUdpAndTcp() throws Exception {
        Path conf = dir.resolve("sluice.yml");
        Files.writeString(conf, "allow-clients: [10.0.0.0/8]\n");
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), new ManualClock(), b -> b.configFile(conf))) {
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.udp(s.address(), Dns.query(1, "a.example.", Type.A))));

            Files.writeString(conf, "allow-clients: [10.0.0.0/8, 127.0.0.0/8]\n");
            assertEquals(List.of("allow-clients: 10.0.0.0/8 -> 10.0.0.0/8, 127.0.0.0/8"), s.sluice().reload());
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(2, "a.example.", Type.A))));
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.tcp(s.address(), Dns.query(3, "a.example.", Type.A))));

            Files.writeString(conf, "allow-clients: [10.0.0.0/8]\nacl-action: drop\n");
            assertEquals(List.of("allow-clients: 10.0.0.0/8, 127.0.0.0/8 -> 10.0.0.0/8", "acl-action: refused -> drop"),
                    s.sluice().reload());
            assertNull(Dns.udp(s.address(), Dns.query(4, "a.example.", Type.A), 300), "dropped now");
            try (Socket c = new Socket(s.address().getAddress(), s.address().getPort())) {
                c.setSoTimeout(5000);
                assertEquals(-1, c.getInputStream().read(), "a new TCP connection from outside is closed at once");
            }
            assertEquals(2, up.udpQueries() + up.tcpQueries(), "only the two allowed queries reached the upstream");
            assertEquals(3, s.sluice().metrics().count("acl_denied"));
        }
    }

    @Test
    void aWildcardListenAddressWithTheDefaultAclIsSaidAtStart() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), b -> b.set("listen", List.of("0.0.0.0:0")))) {
            String warning = s.sluice().exposureWarning();
            assertNotNull(warning);
            assertTrue(warning.contains("0.0.0.0:") && warning.contains("allow-clients"), warning);
        }
        // conf/sluice.yml writes the default list out: that is still the default
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), b -> {
                 b.set("listen", List.of("0.0.0.0:0"));
                 io.sluice.config.ConfigFile.apply(java.nio.file.Path.of("conf/sluice.yml"), b);
                 b.set("listen", List.of("0.0.0.0:0"));
             })) {
            assertNotNull(s.sluice().exposureWarning(), "the sample file's list is the default");
        }
    }

    /** The allocation-free IPv4 match rests on this: if a JDK changes it, this says so. */
    @Test
    void anIpv4AddressHashCodeIsTheAddress() throws Exception {
        for (String a : new String[] {"10.1.2.3", "192.168.0.1", "255.255.255.255", "0.0.0.0", "172.31.255.7"}) {
            byte[] b = InetAddress.getByName(a).getAddress();
            int expected = (b[0] & 0xFF) << 24 | (b[1] & 0xFF) << 16 | (b[2] & 0xFF) << 8 | (b[3] & 0xFF);
            assertEquals(expected, ((Inet4Address) InetAddress.getByName(a)).hashCode(), a);
        }
        List<Network> nets = SettingTable.PRIVATE_NETWORKS;
        assertTrue(nets.stream().anyMatch(n -> n.contains(addr("172.31.255.7"))));
        assertTrue(nets.stream().noneMatch(n -> n.contains(addr("172.32.0.1"))));
        assertTrue(nets.stream().anyMatch(n -> n.contains(addr("fd00::1"))));
        assertTrue(nets.stream().noneMatch(n -> n.contains(addr("2001:db8::1"))));
    }

    private static InetAddress addr(String a) {
        try {
            return InetAddress.getByName(a);
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException(a, e);
        }
    }
}
