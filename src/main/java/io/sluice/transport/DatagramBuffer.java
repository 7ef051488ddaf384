package io.sluice.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * Where one event loop reads its datagrams: direct memory of the largest size read, seen as a
 * {@link ByteBuf} for the query path. A fresh buffer per read would have the allocator create
 * direct memory under load and zero it, a write of the whole buffer for every datagram
 * (docs/benchmarks.md, "Reused read buffers").
 *
 * <p>Invariant: a datagram read here is dead once the next read starts; nothing may keep a
 * reference to {@link #datagram()}, only a copy. Every reader of one buffer runs on its loop, and
 * each hands its datagram on before it reads the next.
 *
 * <p>A reader reads a socket until it is told none is waiting or it has read {@code atMost} more;
 * a buffer that reads ahead ({@link DatagramIo}'s batches) never reads more than that, so that
 * nothing it holds is left behind when the reader moves to another socket.
 */
public abstract class DatagramBuffer {
    /** A buffer of {@link DatagramIo#chosen()}'s. */
    public static DatagramBuffer of(int bytes) {
        return DatagramIo.chosen().buffer(bytes);
    }

    /**
     * The next datagram waiting on {@code socket}, {@link #datagram()} from now on; its sender, or
     * null when none was.
     *
     * @param atMost how many more this reader reads of {@code socket} in this burst, this one included
     */
    public abstract InetSocketAddress receive(UdpSocket socket, int atMost) throws IOException;

    /** The next datagram waiting on the connected {@code socket}; false when none was. */
    public abstract boolean read(UdpSocket socket, int atMost) throws IOException;

    /** The datagram last read, between reader and writer index. */
    public abstract ByteBuf datagram();

    /** Through the JDK's channel, a datagram a read. */
    static final class OneAtATime extends DatagramBuffer {
        private final ByteBuffer nio;
        private final ByteBuf datagram;

        OneAtATime(int bytes) {
            this.nio = ByteBuffer.allocateDirect(bytes);
            this.datagram = Unpooled.wrappedBuffer(nio);
        }

        @Override
        public InetSocketAddress receive(UdpSocket socket, int atMost) throws IOException {
            nio.clear();
            InetSocketAddress from = socket.receive(nio);
            datagram.setIndex(0, from == null ? 0 : nio.position());
            return from;
        }

        @Override
        public boolean read(UdpSocket socket, int atMost) throws IOException {
            nio.clear();
            int n = socket.read(nio);
            datagram.setIndex(0, n);
            return n > 0;
        }

        @Override
        public ByteBuf datagram() {
            return datagram;
        }
    }
}
