package io.sluice.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * Where one event loop reads its datagrams, one at a time: a direct buffer of the largest size
 * read, seen as a {@link ByteBuf} for the query path. A fresh buffer per read would have the
 * allocator create direct memory under load and zero it, a write of the whole buffer for every
 * datagram (docs/benchmarks.md, "Reused read buffers").
 *
 * <p>Invariant: a datagram read here is dead once the next read starts; nothing may keep a
 * reference to {@link #datagram()}, only a copy. Every reader of one buffer runs on its loop, and
 * each hands its datagram on before it reads the next.
 */
public final class DatagramBuffer {
    private final ByteBuffer nio;
    private final ByteBuf datagram;

    public DatagramBuffer(int bytes) {
        this.nio = ByteBuffer.allocateDirect(bytes);
        this.datagram = Unpooled.wrappedBuffer(nio);
    }

    /** Reads the next datagram waiting on {@code socket}; its sender, or null when none was. */
    public InetSocketAddress receive(UdpSocket socket) throws IOException {
        nio.clear();
        InetSocketAddress from = socket.receive(nio);
        datagram.setIndex(0, from == null ? 0 : nio.position());
        return from;
    }

    /** Reads the next datagram waiting on the connected {@code socket}; false when none was. */
    public boolean read(UdpSocket socket) throws IOException {
        nio.clear();
        int n = socket.read(nio);
        datagram.setIndex(0, n);
        return n > 0;
    }

    /** The datagram last read, between reader and writer index. */
    public ByteBuf datagram() {
        return datagram;
    }
}
