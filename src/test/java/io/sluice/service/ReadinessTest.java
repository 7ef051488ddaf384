package io.sluice.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.unix.DomainDatagramSocketAddress;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.channel.unix.Socket;
import io.sluice.testing.Await;
import io.sluice.testing.Ports;
import io.sluice.testing.SluiceProcess;
import io.sluice.testing.TestCertificates;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A start that is ready when it says so: sluice tells systemd READY=1 (a {@code Type=notify}
 * unit's $NOTIFY_SOCKET, here a datagram socket of the test's) only once every listener, UDP,
 * TCP, TLS and HTTPS, accepts; and STOPPING=1 when it is told to stop.
 */
class ReadinessTest {
    @TempDir
    Path dir;

    @Test
    void readyIsToldOnceEveryListenerAcceptsAndStoppingWhenItStops() throws Exception {
        Assumptions.assumeTrue(Epoll.isAvailable(), "no native transport: no unix datagram socket here");
        Path[] cert = TestCertificates.selfSigned(dir, "dns.sluice-test");
        int udpTcp = Ports.freeUdpAndTcp();
        int tls = Ports.freeUdpAndTcp();
        int https = Ports.freeUdpAndTcp();
        Path notify = dir.resolve("notify.sock");
        Socket manager = Socket.newSocketDomainDgram();
        manager.bind(new DomainSocketAddress(notify.toFile()));
        Path log = dir.resolve("sluice.log");
        ProcessBuilder pb = SluiceProcess.command("--listen", "127.0.0.1:" + udpTcp, "--upstream", "127.0.0.1:9",
                "--tls-listen", "127.0.0.1:" + tls, "--https-listen", "127.0.0.1:" + https,
                "--tls-cert-file", cert[0].toString(), "--tls-key-file", cert[1].toString());
        pb.environment().put("NOTIFY_SOCKET", notify.toString());
        Process p = pb.redirectError(log.toFile()).start();
        try {
            assertEquals("READY=1", next(manager, p, log));
            for (int port : new int[] {udpTcp, tls, https}) {
                try (java.net.Socket s = new java.net.Socket()) {
                    s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
                    assertTrue(s.isConnected(), "port " + port + " accepts at READY=1");
                }
            }
            assertTrue(Files.readString(log).contains("listening on"), "the startup line comes first");
            p.destroy(); // SIGTERM
            assertEquals("STOPPING=1", next(manager, p, log));
            assertTrue(p.waitFor(20, TimeUnit.SECONDS));
            assertEquals(0, p.exitValue());
        } finally {
            p.destroyForcibly();
            manager.close();
        }
    }

    /** The next notification sluice sends the service manager. */
    private static String next(Socket manager, Process p, Path log) throws Exception {
        ByteBuf buf = Unpooled.directBuffer(256);
        try {
            DomainDatagramSocketAddress from = Await.result("a notification from sluice", Duration.ofSeconds(30), () -> {
                if (!p.isAlive()) {
                    throw new AssertionError("sluice exited: " + Files.readString(log));
                }
                return manager.recvFromDomainSocket(buf.nioBuffer(0, buf.capacity()), 0, buf.capacity());
            });
            assertNotNull(from);
            byte[] bytes = new byte[from.receivedAmount()];
            buf.getBytes(0, bytes);
            return new String(bytes, StandardCharsets.UTF_8);
        } finally {
            buf.release();
        }
    }
}
