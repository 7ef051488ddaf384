package io.sluice.ecs;

import static io.sluice.ecs.SubnetClients.address;
import static io.sluice.ecs.SubnetClients.subnetOf;
import static io.sluice.ecs.SubnetClients.udpFrom;
import static io.sluice.ecs.SubnetClients.withSubnet;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.sluice.limit.ManualClock;
import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/**
 * What an upstream's reply says of Client Subnet (RFC 7871 section 7.3), against the test upstream:
 * none (as from nsd), or another network's.
 */
class ClientSubnetRepliesTest {
    private final ManualClock clock = new ManualClock();

    @Test
    void anAnswerWithoutClientSubnetIsForEveryNetworkAndOneForAnotherNetworkIsDropped() throws Exception {
        try (TestUpstream plain = new TestUpstream(); // answers without Client Subnet, as nsd does
             RunningSluice s = RunningSluice.startFor(List.of(plain.hostPort()), clock, b -> { }, "ecs.mode", "add",
                     "cache.size", "1000", "timeout", "300ms", "retransmit", "false")) {
            String name = "www.example.";
            assertEquals("192.0.2.1", address(udpFrom("127.0.1.7", s, Dns.queryWithOpt(1, name, Type.A, List.of()))));
            Message other = udpFrom("127.0.2.7", s, withSubnet(2, name, Type.A, "127.0.2.0", 24));
            assertEquals("192.0.2.1", address(other));
            assertEquals(1, s.sluice().metrics().count("cache_hits"), "RFC 7871 section 7.3: as a scope of 0");
            assertEquals(1, plain.udpQueries());
            assertNull(subnetOf(other), "the upstream's answer, without the option");
            plain.servfail("failing.example.");
            assertEquals(Rcode.SERVFAIL, udpFrom("127.0.1.7", s, Dns.queryWithOpt(5, "failing.example.", Type.A,
                    List.of())).getRcode());
            udpFrom("127.0.2.7", s, Dns.queryWithOpt(6, "failing.example.", Type.A, List.of()));
            assertEquals(3, plain.udpQueries(), "a SERVFAIL without the option may be one network's alone: asked again");

            String wrong = "a." + TestUpstream.OTHER_NETWORK;
            Message dropped = udpFrom("127.0.1.7", s, Dns.queryWithOpt(3, wrong, Type.A, List.of()));
            assertEquals(Rcode.SERVFAIL, dropped.getRcode(), "a reply for 198.51.100.0/24 answers no query for 127.0.1.0/24");
            assertEquals(1, s.sluice().metrics().count("replies_mismatched"));
            Message unnamed = udpFrom("127.0.1.7", s, withSubnet(4, wrong, Type.A, "0.0.0.0", 0));
            assertEquals(Rcode.NOERROR, unnamed.getRcode(), "a query naming no network takes any");
        }
    }

    @Test
    void overAConnectionAReplyForAnotherNetworkMovesTheQueryToTheNextUpstreamAtOnce() throws Exception {
        try (TestUpstream wrong = new TestUpstream();
             TestUpstream next = new TestUpstream(); // not sent Client Subnet: its reply carries none
             RunningSluice s = RunningSluice.startFor(List.of(wrong.hostPort(), next.hostPort()), clock, b -> { },
                     "ecs.mode", "add", "ecs.upstreams", wrong.hostPort(), "timeout", "10s", "query-timeout", "12s")) {
            // the client reads for 5 s at most: waiting out the first upstream's 10 s would fail it
            Message m = Dns.parse(Dns.tcp(s.address(), withSubnet(1, "a." + TestUpstream.OTHER_NETWORK, Type.A,
                    "127.0.1.0", 24)));
            assertEquals(Rcode.NOERROR, m.getRcode());
            assertEquals(1, wrong.tcpQueries());
            assertEquals(1, next.tcpQueries(), "on a connection no other reply comes: the next upstream asked now");
            assertEquals(1, s.sluice().metrics().count("replies_mismatched"));
        }
    }
}
