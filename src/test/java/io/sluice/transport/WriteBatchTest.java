package io.sluice.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Which datagrams of a wake-up leave at once and which wait for its flush. Over loopback a send
 * lands in the receiver's queue before it returns, so a non-blocking receive tells, without
 * waiting, whether a datagram has left. A task on the loop stands for a wake-up's reads.
 */
class WriteBatchTest {
    private static final InetSocketAddress LOOPBACK = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    private final Transport transport = Transport.best();
    private EventLoopGroup group;
    private UdpSocket socket;
    private DatagramChannel client;
    private EventLoop loop;
    private final Semaphore batchesEnded = new Semaphore(0);
    private WriteBatch batch;

    @BeforeEach
    void bind() throws Exception {
        group = transport.newGroup(1, "write-batch-test");
        loop = group.next();
        socket = UdpSocket.bind(transport, loop, LOOPBACK, false, s -> { });
        client = DatagramChannel.open().bind(LOOPBACK);
        client.configureBlocking(false);
        batch = new WriteBatch(loop, new LongAdder());
        loop.submit(() -> batch.addAfterFlush(batchesEnded::release)).get();
    }

    @AfterEach
    void close() throws Exception {
        socket.close();
        client.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }

    @Test
    void aWakeUpsFirstDatagramLeavesAtOnceAndTheRestAfterItsReads() throws Exception {
        InetSocketAddress to = (InetSocketAddress) client.getLocalAddress();
        loop.submit(() -> {
            for (int i = 1; i <= 3; i++) {
                batch.datagram(socket, to, Unpooled.directBuffer().writeByte(i));
            }
            assertArrayEquals(new byte[] {1}, received());
            assertNull(client.receive(ByteBuffer.allocate(16)), "the second waits for the flush");
            return null;
        }).get();

        assertTrue(batchesEnded.tryAcquire(10, TimeUnit.SECONDS), "the wake-up's end flushes");
        assertArrayEquals(new byte[] {2}, received());
        assertArrayEquals(new byte[] {3}, received());

        loop.submit(() -> {
            batch.datagram(socket, to, Unpooled.directBuffer().writeByte(4));
            assertArrayEquals(new byte[] {4}, received(), "the next wake-up's first leaves at once again");
            return null;
        }).get();
        assertTrue(batchesEnded.tryAcquire(10, TimeUnit.SECONDS));
        assertEquals(0, batchesEnded.availablePermits(), "one flush per wake-up");
    }

    /**
     * A send's failure told during the flush may queue more datagrams (a forwarder sends its queries
     * on to the next upstream): they leave in that flush, none is lost.
     */
    @Test
    void datagramsQueuedByAFailureToldDuringTheFlushLeaveInIt() throws Exception {
        InetSocketAddress to = (InetSocketAddress) client.getLocalAddress();
        UdpSocket closed = UdpSocket.bind(transport, loop, LOOPBACK, false, s -> { });
        loop.submit(() -> {
            closed.close();
            batch.datagram(socket, to, Unpooled.directBuffer().writeByte(1));
            batch.connected(closed, Unpooled.directBuffer().writeByte(2), e -> {
                for (int i = 3; i <= 5; i++) {
                    batch.datagram(socket, to, Unpooled.directBuffer().writeByte(i));
                }
            });
            return null;
        }).get();
        assertTrue(batchesEnded.tryAcquire(10, TimeUnit.SECONDS));
        loop.submit(() -> null).get(); // the flush's own end, should one more have been queued
        assertArrayEquals(new byte[] {1}, received());
        for (int i = 3; i <= 5; i++) {
            assertArrayEquals(new byte[] {(byte) i}, received(), "datagram " + i);
        }
        assertNull(client.receive(ByteBuffer.allocate(16)));
    }

    private byte[] received() throws Exception {
        ByteBuffer b = ByteBuffer.allocate(16);
        assertNotNull(client.receive(b), "a datagram should have arrived");
        b.flip();
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        return bytes;
    }
}
