package io.sluice.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.sluice.limit.ManualClock;
import io.sluice.testing.Dns;
import io.sluice.testing.DnsdistServer;
import io.sluice.testing.ProxyV2;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.io.OutputStream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/**
 * PROXY v2 from a trusted source, over real sockets from 127.0.0.1: the client a header names is
 * the one the client rules and the per-client budgets judge; the answer goes to the proxy.
 */
class ProxyProtocolTest {
    private static final int UDP = ProxyV2.UDP;
    private static final int TCP = ProxyV2.TCP;

    /** 127.0.0.1 itself is outside allow-clients: only a client a header names can be answered. */
    private static final RunningSluice.Customizer TRUSTING_LOOPBACK = b -> {
        b.set("allow-clients", List.of("10.0.0.0/8", "fd00::/8"));
        b.set("proxy-protocol-from", List.of("127.0.0.0/8"));
    };

    @Test
    void aProxiedDatagramIsJudgedAsTheClientItNames() throws Exception {
        try (TestUpstream up = new TestUpstream(); RunningSluice s = RunningSluice.start(List.of(up), TRUSTING_LOOPBACK)) {
            byte[] answer = Dns.udp(s.address(), ProxyV2.proxied("10.1.2.3", UDP, Dns.query(11, "in.example.", Type.A)));
            assertEquals(Rcode.NOERROR, Dns.rcode(answer), "answered, to the proxy");
            assertEquals(11, Dns.id(answer));
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(),
                    ProxyV2.proxied("fd00::5", UDP, Dns.query(12, "in6.example.", Type.A)))), "an IPv6 client behind an IPv4 proxy");
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.udp(s.address(),
                    ProxyV2.proxied("192.0.2.7", UDP, Dns.query(13, "out.example.", Type.A)))), "outside allow-clients");
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.udp(s.address(),
                    ProxyV2.local(Dns.query(14, "local.example.", Type.A)))), "LOCAL names no one: the proxy is the client");
            assertEquals(2, up.udpQueries(), "only the allowed clients' queries reached the upstream");
            assertEquals(2, s.sluice().metrics().count("acl_denied"));
            assertEquals(0, s.sluice().metrics().count("proxy_header_invalid"));
        }
    }

    @Test
    void aProxysDatagramWithoutAValidHeaderIsDroppedAndCounted() throws Exception {
        try (TestUpstream up = new TestUpstream(); RunningSluice s = RunningSluice.start(List.of(up), TRUSTING_LOOPBACK)) {
            assertNull(Dns.udp(s.address(), Dns.query(1, "bare.example.", Type.A), 300), "no header");
            byte[] cut = ProxyV2.proxied("10.1.2.3", UDP, Dns.query(2, "cut.example.", Type.A));
            assertNull(Dns.udp(s.address(), Arrays.copyOf(cut, 20), 300), "the header cut short");
            byte[] version1 = ProxyV2.proxied("10.1.2.3", UDP, Dns.query(3, "v1.example.", Type.A));
            version1[12] = 0x11;
            assertNull(Dns.udp(s.address(), version1, 300), "not version 2");
            assertEquals(3, s.sluice().metrics().count("proxy_header_invalid"));
            assertEquals(0, s.sluice().metrics().count("formerr"), "not read as DNS");
            assertEquals(0, up.udpQueries());
        }
    }

    @Test
    void perClientBudgetsCountTheClientsAProxyNames() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "allow-clients", "10.0.0.0/8",
                     "proxy-protocol-from", "127.0.0.1/32",
                     "limits.per-client.queries", "1", "limits.per-client.window", "1h")) {
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(),
                    ProxyV2.proxied("10.0.0.1", UDP, Dns.query(1, "a.example.com.", Type.A)))));
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.udp(s.address(),
                    ProxyV2.proxied("10.0.0.1", UDP, Dns.query(2, "b.example.com.", Type.A)))), "10.0.0.0/24's budget spent");
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(),
                    ProxyV2.proxied("10.0.1.1", UDP, Dns.query(3, "c.example.com.", Type.A)))),
                    "another client behind the same proxy has its own budget");
            assertEquals(2, up.udpQueries());
        }
    }

    @Test
    void aProxiedTcpConnectionIsJudgedAsTheClientItNames() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "allow-clients", "10.0.0.0/8",
                     "proxy-protocol-from", "127.0.0.0/8", "max-tcp-connections-per-client", "1");
             Socket allowed = new Socket(s.address().getAddress(), s.address().getPort());
             Socket denied = new Socket(s.address().getAddress(), s.address().getPort())) {
            allowed.setSoTimeout(5000);
            denied.setSoTimeout(5000);
            OutputStream out = allowed.getOutputStream();
            byte[] header = ProxyV2.proxied("10.1.2.3", TCP, new byte[0]);
            out.write(header, 0, 7); // a header may come in pieces
            out.flush();
            out.write(header, 7, header.length - 7);
            Dns.writeFrame(allowed, Dns.query(21, "one.example.", Type.A));
            Dns.writeFrame(allowed, Dns.query(22, "two.example.", Type.A));
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.readFrame(allowed)));
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.readFrame(allowed)));

            // a second connection from the proxy, past max-tcp-connections-per-client: the proxy is not one client
            denied.getOutputStream().write(ProxyV2.proxied("192.0.2.7", TCP, new byte[0]));
            Dns.writeFrame(denied, Dns.query(23, "out.example.", Type.A));
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.readFrame(denied)), "the named client is outside allow-clients");
            assertEquals(2, up.tcpQueries());
        }
    }

    /**
     * A proxy that forwards a UDP client over TCP says so in its header (DGRAM): that client proved
     * nothing, and spends only the unverified part of a budget (limits.verified-share).
     */
    @Test
    void aClientThatCameToItsProxyInDatagramsIsNotVerifiedOverTheProxysConnection() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), new ManualClock(), b -> { }, // one window throughout
                     "proxy-protocol-from", "127.0.0.0/8", "limits.default.queries", "4", "limits.verified-share", "0.5")) {
            int[] rcodes = new int[2];
            for (int transport : new int[] {UDP, TCP}) {
                try (Socket c = new Socket(s.address().getAddress(), s.address().getPort())) {
                    c.setSoTimeout(5000);
                    c.getOutputStream().write(ProxyV2.proxied("10.1.2.3", transport, new byte[0]));
                    for (int i = 0; i < 3; i++) {
                        Dns.writeFrame(c, Dns.query(i, "q" + transport + i + ".example.com.", Type.A));
                        rcodes[transport - 1] += Dns.rcode(Dns.readFrame(c)) == Rcode.NOERROR ? 1 : 0;
                    }
                }
            }
            assertEquals(2, rcodes[UDP - 1], "a datagram client over the proxy's TCP: half the budget");
            assertEquals(2, rcodes[TCP - 1], "a stream client: the rest of it");
        }
    }

    @Test
    void aProxysTcpConnectionWithoutAHeaderIsClosed() throws Exception {
        try (TestUpstream up = new TestUpstream(); RunningSluice s = RunningSluice.start(List.of(up), TRUSTING_LOOPBACK);
             Socket c = new Socket(s.address().getAddress(), s.address().getPort())) {
            c.setSoTimeout(5000);
            // One write: bytes of the client's that arrive after the close would make it a reset.
            c.getOutputStream().write(Dns.frames(Dns.query(1, "bare.example.", Type.A)));
            assertEquals(-1, c.getInputStream().read(), "closed, nothing answered");
            assertEquals(1, s.sluice().metrics().count("proxy_header_invalid"));
            assertEquals(0, up.tcpQueries());
        }
    }

    @Test
    void aReloadPutsTheProxiesInForce(@TempDir Path dir) throws Exception {
        Path conf = dir.resolve("sluice.yml");
        Files.writeString(conf, "allow-clients: [10.0.0.0/8]\n");
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), new ManualClock(), b -> b.configFile(conf))) {
            byte[] query = ProxyV2.proxied("10.1.2.3", UDP, Dns.query(1, "in.example.", Type.A));
            assertNull(Dns.udp(s.address(), query, 300), "not a proxy: junk from outside allow-clients, unanswered");

            Files.writeString(conf, "allow-clients: [10.0.0.0/8]\nproxy-protocol-from: [127.0.0.1/32]\n");
            assertEquals(List.of("proxy-protocol-from: none -> 127.0.0.1/32"), s.sluice().reload());
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), query)));
            assertEquals(1, up.udpQueries());
        }
    }

    /** dnsdist's own header (newServer's useProxyProtocol), over UDP and TCP, each client from its own loopback address. */
    @Test
    void behindARealDnsdistEachClientIsJudgedAsItself(@TempDir Path dir) throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "allow-clients", "127.0.0.2/32",
                     "proxy-protocol-from", "127.0.0.1/32");
             DnsdistServer dnsdist = DnsdistServer.startProxying(dir, s.address())) {
            long deniedBefore = s.sluice().metrics().count("acl_denied"); // dnsdist's readiness polls, from 127.0.0.1
            assertEquals(Rcode.NOERROR, Dns.rcode(udpFrom("127.0.0.2", dnsdist.address(), Dns.query(1, "in.example.", Type.A))));
            assertEquals(Rcode.REFUSED, Dns.rcode(udpFrom("127.0.0.3", dnsdist.address(), Dns.query(2, "out.example.", Type.A))));
            assertEquals(Rcode.NOERROR, Dns.rcode(tcpFrom("127.0.0.2", dnsdist.address(), Dns.query(3, "in.example.", Type.A))));
            assertEquals(Rcode.REFUSED, Dns.rcode(tcpFrom("127.0.0.3", dnsdist.address(), Dns.query(4, "out.example.", Type.A))));
            assertEquals(deniedBefore + 2, s.sluice().metrics().count("acl_denied"));
            assertEquals(0, s.sluice().metrics().count("proxy_header_invalid"), "dnsdist's headers all read");
        }
    }

    private static byte[] udpFrom(String client, InetSocketAddress server, byte[] query) throws Exception {
        try (DatagramSocket socket = new DatagramSocket(new InetSocketAddress(client, 0))) {
            socket.setSoTimeout(5000);
            socket.send(new DatagramPacket(query, query.length, server));
            DatagramPacket p = new DatagramPacket(new byte[65535], 65535);
            socket.receive(p);
            return Arrays.copyOf(p.getData(), p.getLength());
        }
    }

    private static byte[] tcpFrom(String client, InetSocketAddress server, byte[] query) throws Exception {
        try (Socket c = new Socket(server.getAddress(), server.getPort(), InetAddress.getByName(client), 0)) {
            c.setSoTimeout(5000);
            Dns.writeFrame(c, query);
            return Dns.readFrame(c);
        }
    }

    @Test
    void aSourceNotTrustedIsItsOwnClient() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "proxy-protocol-from", "192.0.2.0/24")) {
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(1, "plain.example.", Type.A))));
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.tcp(s.address(), Dns.query(2, "plain.example.", Type.A))));
            assertEquals(0, s.sluice().metrics().count("proxy_header_invalid"));
        }
    }
}
