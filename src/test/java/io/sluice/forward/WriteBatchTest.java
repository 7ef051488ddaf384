package io.sluice.forward;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.embedded.EmbeddedChannel;
import io.sluice.metrics.Registry;
import io.sluice.transport.Transport;
import io.sluice.transport.UdpSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Which datagrams of a wake-up leave at once and which wait for its flush. Over loopback a send
 * lands in the receiver's queue before it returns, so a non-blocking receive tells, without
 * waiting, whether a datagram has left.
 */
class WriteBatchTest {
    private static final InetSocketAddress LOOPBACK = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    private final Transport transport = Transport.best();
    private EventLoopGroup group;
    private UdpSocket socket;
    private DatagramChannel client;
    /** Runs the batch's flush task when told: a wake-up ends when the test says. */
    private final EmbeddedChannel wakeUp = new EmbeddedChannel();
    private final AtomicInteger batchesEnded = new AtomicInteger();
    private WriteBatch batch;

    @BeforeEach
    void bind() throws Exception {
        group = transport.newGroup(1, "write-batch-test");
        socket = UdpSocket.bind(transport, group.next(), LOOPBACK, false, s -> { });
        client = DatagramChannel.open().bind(LOOPBACK);
        client.configureBlocking(false);
        batch = new WriteBatch(wakeUp.eventLoop(), new ForwardMeters(new Registry(), List.of(LOOPBACK)),
                batchesEnded::incrementAndGet);
    }

    @AfterEach
    void close() throws Exception {
        socket.close();
        client.close();
        group.shutdownGracefully().sync();
    }

    @Test
    void aWakeUpsFirstDatagramLeavesAtOnceAndTheRestAfterItsReads() throws Exception {
        InetSocketAddress to = (InetSocketAddress) client.getLocalAddress();
        for (int i = 1; i <= 3; i++) {
            batch.answer(null, socket, to, Unpooled.directBuffer().writeByte(i));
        }
        assertArrayEquals(new byte[] {1}, received());
        assertNull(client.receive(ByteBuffer.allocate(16)), "the second waits for the flush");

        wakeUp.runPendingTasks();
        assertArrayEquals(new byte[] {2}, received());
        assertArrayEquals(new byte[] {3}, received());
        assertEquals(1, batchesEnded.get());

        batch.answer(null, socket, to, Unpooled.directBuffer().writeByte(4));
        assertArrayEquals(new byte[] {4}, received(), "the next wake-up's first leaves at once again");
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
