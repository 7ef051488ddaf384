package io.sluice.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Type;

/**
 * Which of the threads' UDP sockets reads a datagram. Two threads with one upstream socket each,
 * so the upstream's view of the source port says which thread forwarded a query.
 */
class UdpSteeringTest {
    private static final int CLIENTS = 32;

    @Test
    void byHashClientsSpreadOverTheThreads() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "upstream-sockets", "1", "udp-steering", "hash")) {
            // 32 source ports all hashed to one of two sockets: a chance of 2^-31.
            assertEquals(2, burst(s, up).size(), "queries forwarded per thread");
        }
    }

    @Test
    void byCpuABurstSentFromOneCpuStaysOnOneThread() throws Exception {
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "upstream-sockets", "1")) {
            Assumptions.assumeTrue(s.sluice().describe().endsWith("udp steering cpu"),
                    "needs epoll and SO_ATTACH_REUSEPORT_CBPF: " + s.sluice().describe());
            // The burst is sent without blocking, so it leaves from one CPU unless the scheduler
            // moves the thread in the middle of it; a few tries make that noise irrelevant, while
            // the hash would put 29 of 32 on one thread about once in 30,000 tries.
            Map<Integer, Integer> perThread = Map.of();
            for (int attempt = 0; attempt < 5 && !mostlyOne(perThread); attempt++) {
                perThread = burst(s, up);
            }
            assertTrue(mostlyOne(perThread), "queries forwarded per thread: " + perThread);
        }
    }

    private static boolean mostlyOne(Map<Integer, Integer> perThread) {
        return perThread.values().stream().anyMatch(n -> n >= CLIENTS - 3);
    }

    /** Sends one query from each of 32 new sockets at once; returns queries forwarded per upstream port. */
    private static Map<Integer, Integer> burst(RunningSluice s, TestUpstream up) throws Exception {
        int before = up.senderPorts().size();
        List<DatagramSocket> clients = new ArrayList<>();
        try {
            for (int i = 0; i < CLIENTS; i++) {
                DatagramSocket c = new DatagramSocket();
                c.setSoTimeout(5000);
                clients.add(c);
            }
            List<DatagramPacket> queries = new ArrayList<>();
            for (int i = 0; i < CLIENTS; i++) {
                byte[] q = Dns.query(i, "steer" + i + ".example.", Type.A);
                queries.add(new DatagramPacket(q, q.length, s.address()));
            }
            for (int i = 0; i < CLIENTS; i++) {
                clients.get(i).send(queries.get(i));
            }
            for (DatagramSocket c : clients) {
                DatagramPacket reply = new DatagramPacket(new byte[512], 512);
                c.receive(reply);
                assertNotNull(reply.getData());
            }
        } finally {
            clients.forEach(DatagramSocket::close);
        }
        Map<Integer, Integer> perPort = new HashMap<>();
        for (int port : up.senderPorts().subList(before, before + CLIENTS)) {
            perPort.merge(port, 1, Integer::sum);
        }
        return perPort;
    }
}
