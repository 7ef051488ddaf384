package io.sluice.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.PortUnreachableException;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The loops' datagrams through whichever {@link DatagramIo} this JVM chose: the JDK's channels on
 * JDK 17, the batches on JDK 22+ (the build's second test run). Real datagrams over loopback; a
 * bound socket not yet read from is read here, on its loop, in tasks that stand for its bursts.
 */
class DatagramIoTest {
    private static final InetSocketAddress LOOPBACK = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    private final Transport transport = Transport.best();
    private final List<AutoCloseable> open = new ArrayList<>();
    private EventLoopGroup group;
    private EventLoop loop;

    @BeforeEach
    void loop() {
        group = transport.newGroup(1, "datagram-io-test");
        loop = group.next();
    }

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : open) {
            c.close();
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }

    @Test
    void theBatchesAreChosenWhereTheJvmCanCallRecvmmsg() {
        boolean can = Runtime.version().feature() >= 22 && System.getProperty("os.name").equals("Linux")
                && !"jdk".equals(System.getProperty("sluice.udp-io"));
        assertEquals(can, DatagramIo.describe().startsWith("UDP in batches"), DatagramIo.describe());
    }

    @Test
    void everyDatagramOfEveryPeerIsReadInItsOrderWithItsSender() throws Exception {
        UdpSocket socket = bound(LOOPBACK);
        List<DatagramChannel> peers = List.of(peer(), peer(), peer());
        for (int seq = 0; seq < 20; seq++) {
            for (int p = 0; p < peers.size(); p++) {
                peers.get(p).send(ByteBuffer.wrap(new byte[] {(byte) p, (byte) seq}), socket.localAddress());
            }
        }
        DatagramBuffer buffer = DatagramIo.chosen().buffer(512);
        List<String> read = onLoop(() -> {
            List<String> all = new ArrayList<>();
            for (int burst = 0; burst < 10; burst++) {
                for (int i = 0; i < Transport.READS_PER_WAKEUP; i++) {
                    InetSocketAddress from = buffer.receive(socket, Transport.READS_PER_WAKEUP - i);
                    if (from == null) {
                        break;
                    }
                    ByteBuf d = buffer.datagram();
                    assertEquals(2, d.readableBytes());
                    int p = d.getByte(0);
                    assertEquals(peers.get(p).getLocalAddress(), from, "the sender of peer " + p + "'s");
                    all.add(p + ":" + d.getByte(1));
                }
            }
            return all;
        });
        assertEquals(60, read.size(), read.toString());
        for (int p = 0; p < peers.size(); p++) {
            int next = 0;
            for (String r : read) {
                if (r.startsWith(p + ":")) {
                    assertEquals(p + ":" + next++, r, "peer " + p + "'s in order: " + read);
                }
            }
            assertEquals(20, next);
        }
    }

    /** More peers than the batches' sender cache has places, each asking twice: each datagram names its own sender. */
    @Test
    void manyPeersAskingTwiceEachGetTheirOwnSender() throws Exception {
        UdpSocket socket = bound(LOOPBACK);
        List<DatagramChannel> peers = new ArrayList<>();
        for (int p = 0; p < 300; p++) {
            peers.add(peer());
        }
        DatagramBuffer buffer = DatagramIo.chosen().buffer(512);
        for (int round = 0; round < 2; round++) {
            for (int first = 0; first < peers.size(); first += 50) { // 50 at a time: within the socket's receive buffer
                for (int p = first; p < first + 50; p++) {
                    peers.get(p).send(ByteBuffer.wrap(new byte[] {(byte) (p >> 8), (byte) p}), socket.localAddress());
                }
                int read = onLoop(() -> {
                    int n = 0;
                    for (int burst = 0; burst < 1000 && n < 50; burst++) {
                        InetSocketAddress from;
                        while ((from = buffer.receive(socket, Transport.READS_PER_WAKEUP)) != null) {
                            int p = buffer.datagram().getUnsignedShort(0);
                            assertEquals(peers.get(p).getLocalAddress(), from, "the sender of peer " + p + "'s");
                            n++;
                        }
                    }
                    return n;
                });
                assertEquals(50, read, "round " + round + ", peers from " + first);
            }
        }
    }

    @Test
    void aBurstThatStopsAtItsBoundLeavesTheRestToTheSocketAndReadsAnotherSocketsOwn() throws Exception {
        UdpSocket first = bound(LOOPBACK);
        UdpSocket second = bound(LOOPBACK);
        DatagramChannel peer = peer();
        for (int seq = 0; seq < 20; seq++) {
            peer.send(ByteBuffer.wrap(new byte[] {1, (byte) seq}), first.localAddress());
        }
        peer.send(ByteBuffer.wrap(new byte[] {2, 0}), second.localAddress());
        DatagramBuffer buffer = DatagramIo.chosen().buffer(512);
        List<String> read = onLoop(() -> {
            List<String> all = new ArrayList<>();
            for (int i = 0; i < 5; i++) { // a burst bounded at five
                assertNotNull(buffer.receive(first, 5 - i));
                all.add(buffer.datagram().getByte(0) + ":" + buffer.datagram().getByte(1));
            }
            assertNotNull(buffer.receive(second, 16));
            all.add(buffer.datagram().getByte(0) + ":" + buffer.datagram().getByte(1));
            assertNull(buffer.receive(second, 15));
            for (int i = 0; i < 16; i++) {
                if (buffer.receive(first, 16 - i) == null) {
                    break;
                }
                all.add(buffer.datagram().getByte(0) + ":" + buffer.datagram().getByte(1));
            }
            return all;
        });
        List<String> expected = new ArrayList<>();
        for (int seq = 0; seq < 5; seq++) {
            expected.add("1:" + seq);
        }
        expected.add("2:0");
        for (int seq = 5; seq < 20; seq++) {
            expected.add("1:" + seq);
        }
        assertEquals(expected, read);
    }

    @Test
    void aWakeUpsDatagramsReachEachSocketsPeersInOrderPastAFullBatchAndFromIpv6ToIpv4() throws Exception {
        UdpSocket v4 = bound(LOOPBACK);
        UdpSocket dualStack = bound(new InetSocketAddress(InetAddress.getByName("::"), 0));
        assertTrue(dualStack.ipv6());
        DatagramChannel a = peer();
        DatagramChannel b = peer();
        int n = 150;
        UdpSocket[] from = new UdpSocket[n];
        InetSocketAddress[] to = new InetSocketAddress[n];
        ByteBuf[] datagrams = new ByteBuf[n];
        WriteBatch.SendFailure[] failures = new WriteBatch.SendFailure[n];
        for (int i = 0; i < n; i++) {
            from[i] = i % 3 == 0 ? dualStack : v4;
            to[i] = (InetSocketAddress) (i % 2 == 0 ? a : b).getLocalAddress();
            datagrams[i] = Transport.ALLOCATOR.directBuffer().writeShort(i);
        }
        LongAdder errors = new LongAdder();
        DatagramSends sends = DatagramIo.chosen().sends(errors);
        onLoop(() -> {
            sends.sendAll(from, to, datagrams, failures, 0, n);
            return null;
        });
        assertEquals(0, errors.sum());
        for (int i = 0; i < n; i++) {
            assertNull(datagrams[i], "place " + i + " cleared");
            assertNull(from[i]);
        }
        for (DatagramChannel peer : List.of(a, b)) {
            int parity = peer == a ? 0 : 1;
            int lastFromV4 = -1;
            int lastFromDualStack = -1;
            int count = 0;
            ByteBuffer in = ByteBuffer.allocate(16);
            InetSocketAddress sender;
            while ((sender = (InetSocketAddress) receiveWithin(peer, in)) != null) {
                int i = in.flip().getShort();
                in.clear();
                assertEquals(parity, i % 2, "to its own peer");
                boolean dual = i % 3 == 0;
                assertEquals((dual ? dualStack : v4).localAddress().getPort(), sender.getPort());
                assertTrue(sender.getAddress().isLoopbackAddress(), "from loopback, mapped back: " + sender);
                if (dual) {
                    assertTrue(i > lastFromDualStack, "in order from its socket");
                    lastFromDualStack = i;
                } else {
                    assertTrue(i > lastFromV4, "in order from its socket");
                    lastFromV4 = i;
                }
                count++;
            }
            assertEquals(n / 2, count);
        }
    }

    @Test
    void aDatagramOfAClosedSocketIsToldToItsFailureAndTheOthersLeave() throws Exception {
        UdpSocket closed = bound(LOOPBACK);
        UdpSocket live = bound(LOOPBACK);
        DatagramChannel peer = peer();
        InetSocketAddress to = (InetSocketAddress) peer.getLocalAddress();
        List<IOException> told = new ArrayList<>();
        onLoop(() -> {
            closed.close();
            return null;
        });
        UdpSocket[] from = {live, closed, live};
        ByteBuf[] datagrams = new ByteBuf[3];
        for (int i = 0; i < 3; i++) {
            datagrams[i] = Transport.ALLOCATOR.directBuffer().writeByte(i);
        }
        WriteBatch.SendFailure[] failures = {null, told::add, null};
        LongAdder errors = new LongAdder();
        onLoop(() -> {
            DatagramIo.chosen().sends(errors).sendAll(from, new InetSocketAddress[] {to, to, to}, datagrams, failures, 0, 3);
            return null;
        });
        assertEquals(1, told.size(), told.toString());
        assertEquals(0, errors.sum());
        ByteBuffer in = ByteBuffer.allocate(4);
        assertNotNull(receiveWithin(peer, in));
        assertEquals(0, in.get(0));
        in.clear();
        assertNotNull(receiveWithin(peer, in));
        assertEquals(2, in.get(0));
    }

    @Test
    void aConnectedSocketsPortUnreachableIsThrownByItsRead() throws Exception {
        InetSocketAddress nobody;
        try (DatagramChannel gone = DatagramChannel.open().bind(LOOPBACK)) {
            nobody = (InetSocketAddress) gone.getLocalAddress();
        }
        DatagramBuffer buffer = DatagramIo.chosen().buffer(512);
        CompletableFuture<IOException> thrown = new CompletableFuture<>();
        UdpSocket socket = UdpSocket.connect(transport, loop, nobody, s -> {
            try {
                while (buffer.read(s, Transport.READS_PER_WAKEUP)) {
                    thrown.completeExceptionally(new AssertionError("a datagram from nobody"));
                }
            } catch (IOException e) {
                thrown.complete(e);
            }
        });
        open.add(socket::close);
        ByteBuf query = Transport.ALLOCATOR.directBuffer().writeByte(1);
        onLoop(() -> {
            DatagramIo.chosen().sends(new LongAdder()).sendAll(new UdpSocket[] {socket}, new InetSocketAddress[1],
                    new ByteBuf[] {query}, new WriteBatch.SendFailure[] {thrown::complete}, 0, 1);
            return null;
        });
        assertInstanceOf(PortUnreachableException.class, thrown.get(10, TimeUnit.SECONDS));
    }

    private UdpSocket bound(InetSocketAddress at) throws Exception {
        UdpSocket s = UdpSocket.bind(transport, loop, at, false, socket -> { }); // never started: read in tasks
        open.add(s::close);
        return s;
    }

    private DatagramChannel peer() throws IOException {
        DatagramChannel c = DatagramChannel.open().bind(LOOPBACK);
        open.add(c);
        return c;
    }

    private <T> T onLoop(Callable<T> task) throws Exception {
        return loop.submit(task).get(10, TimeUnit.SECONDS);
    }

    /** The next datagram, which over loopback is queued by the time its send returned; null when none is. */
    private static java.net.SocketAddress receiveWithin(DatagramChannel c, ByteBuffer in) throws IOException {
        c.configureBlocking(false);
        return c.receive(in);
    }
}
