package io.sluice.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.io.IOException;
import java.net.DatagramSocket;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/** Listen addresses other than the IPv4 loopback. */
class ListenAddressTest {

    @Test
    void servesOverIpv6() throws Exception {
        try (DatagramSocket probe = new DatagramSocket(new InetSocketAddress("::1", 0))) {
            probe.getLocalPort();
        } catch (IOException e) {
            Assumptions.abort("no IPv6 loopback on this machine");
        }
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), b -> b.set("listen", List.of("[::1]:0")))) {
            assertTrue(s.address().getAddress() instanceof Inet6Address, s.address().toString());
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(1, "v6.example.", Type.AAAA))));
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.tcp(s.address(), Dns.query(2, "v6.example.", Type.AAAA))));
        }
    }

    @Test
    void everyListenAddressServesUdpAndTcp() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up),
                     b -> b.set("listen", List.of("127.0.0.1:0", "127.0.0.2:0")))) {
            List<InetSocketAddress> bound = s.sluice().addresses();
            assertEquals(2, bound.size());
            assertEquals("127.0.0.2", bound.get(1).getAddress().getHostAddress());
            for (InetSocketAddress at : bound) {
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(at, Dns.query(1, "multi.example.", Type.A))));
                assertEquals(Rcode.NOERROR, Dns.rcode(Dns.tcp(at, Dns.query(2, "multi.example.", Type.A))));
            }
        }
    }

    @Test
    void aBindFailureIsReportedInTheKernelsWords() {
        InetSocketAddress port53 = new InetSocketAddress("127.0.0.1", 53);
        assertEquals("permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE)",
                Frontend.kernelSays(new java.net.BindException("Permission denied"), port53));
        assertEquals("address already in use",
                Frontend.kernelSays(new java.io.IOException("bind(..) failed: Address already in use"), port53));
    }

    @Test
    void theDefaultListenAddressIsNotMdnssPort() throws Exception {
        var settings = new io.sluice.config.Settings.Builder().set("upstreams", List.of("127.0.0.1:53")).build();
        assertEquals(List.of(new InetSocketAddress("127.0.0.1", 1053)), settings.listen());
    }
}
