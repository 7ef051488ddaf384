package io.sluice.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;

/**
 * A {@link DatagramBuffer} that reads a socket's waiting datagrams with one {@code recvmmsg} into
 * {@link Transport#READS_PER_WAKEUP} slots, and hands them out one by one. A call that reads
 * fewer than it asked for found the socket empty: the reader is then told so without another
 * call (the loops' epoll sets are level-triggered, so a datagram that came meanwhile is reported
 * again).
 */
final class MmsgBuffer extends DatagramBuffer {
    private static final int SLOTS = Transport.READS_PER_WAKEUP;

    private final int bytes;
    private final MemorySegment vec;
    private final MemorySegment names;
    private final MemorySegment state;
    private final ByteBuf[] slots = new ByteBuf[SLOTS];
    /** The socket the slots were last filled from, while some are unread or it was found empty. */
    private UdpSocket batchOf;
    private int filled;
    private int next;
    /** The last fill read fewer than it asked for: the socket was empty. */
    private boolean emptied;
    /** The last sender read, raw and as an address: consecutive datagrams from one peer share it. */
    private long lastRaw0;
    private long lastRaw8;
    private long lastRaw16;
    private int lastRaw24;
    private InetSocketAddress lastSender;

    MmsgBuffer(int bytes) {
        this.bytes = bytes;
        Arena arena = Arena.ofAuto();
        MemorySegment data = arena.allocate((long) bytes * SLOTS, 64);
        MemorySegment iovs = arena.allocate(Mmsg.IOVEC * SLOTS, 8);
        vec = arena.allocate(Mmsg.MMSGHDR * SLOTS, 8);
        names = arena.allocate(Mmsg.SOCKADDR * SLOTS, 8);
        state = Mmsg.callState(arena);
        for (int i = 0; i < SLOTS; i++) {
            MemorySegment slot = data.asSlice((long) i * bytes, bytes);
            iovs.set(ValueLayout.ADDRESS, i * Mmsg.IOVEC, slot);
            iovs.set(ValueLayout.JAVA_LONG, i * Mmsg.IOVEC + 8, bytes);
            long h = i * Mmsg.MMSGHDR;
            vec.set(ValueLayout.ADDRESS, h + Mmsg.MSG_NAME, names.asSlice(i * Mmsg.SOCKADDR, Mmsg.SOCKADDR));
            vec.set(ValueLayout.ADDRESS, h + Mmsg.MSG_IOV, iovs.asSlice(i * Mmsg.IOVEC, Mmsg.IOVEC));
            vec.set(ValueLayout.JAVA_LONG, h + Mmsg.MSG_IOVLEN, 1);
            slots[i] = Unpooled.wrappedBuffer(slot.asByteBuffer());
        }
    }

    @Override
    public InetSocketAddress receive(UdpSocket socket, int atMost) throws IOException {
        if (!nextOf(socket, atMost)) {
            return null;
        }
        return sender(next - 1);
    }

    @Override
    public boolean read(UdpSocket socket, int atMost) throws IOException {
        return nextOf(socket, atMost);
    }

    @Override
    public ByteBuf datagram() {
        return slots[Math.max(0, next - 1)];
    }

    /** Moves to the next datagram of {@code socket}, reading a batch when none is held; false when none waits. */
    private boolean nextOf(UdpSocket socket, int atMost) throws IOException {
        if (socket == batchOf) {
            if (next < filled) {
                next++;
                return true;
            }
            if (emptied) {
                batchOf = null;
                return false;
            }
        }
        batchOf = null;
        int asked = Math.min(SLOTS, Math.max(1, atMost));
        for (int i = 0; i < asked; i++) {
            vec.set(ValueLayout.JAVA_INT, i * Mmsg.MMSGHDR + Mmsg.MSG_NAMELEN, Mmsg.SOCKADDR_IN6);
        }
        int n = Mmsg.recvmmsg(state, socket.descriptor(), vec, asked);
        if (n <= 0) {
            filled = next = 0;
            int errno = n < 0 ? Mmsg.errno(state) : Mmsg.EAGAIN;
            if (errno == Mmsg.EAGAIN || errno == Mmsg.EINTR) {
                return false;
            }
            throw Mmsg.error("recvmmsg", errno);
        }
        for (int i = 0; i < n; i++) {
            int length = vec.get(ValueLayout.JAVA_INT, i * Mmsg.MMSGHDR + Mmsg.MSG_LEN);
            slots[i].setIndex(0, Math.min(length, bytes));
        }
        batchOf = socket;
        filled = n;
        next = 1;
        emptied = n < asked;
        return true;
    }

    private InetSocketAddress sender(int slot) throws IOException {
        long at = slot * Mmsg.SOCKADDR;
        long raw0 = names.get(ValueLayout.JAVA_LONG, at);
        boolean v4 = names.get(ValueLayout.JAVA_SHORT, at) == Mmsg.AF_INET;
        long raw8 = v4 ? 0 : names.get(ValueLayout.JAVA_LONG, at + 8);
        long raw16 = v4 ? 0 : names.get(ValueLayout.JAVA_LONG, at + 16);
        int raw24 = v4 ? 0 : names.get(ValueLayout.JAVA_INT, at + 24);
        if (lastSender == null || raw0 != lastRaw0 || raw8 != lastRaw8 || raw16 != lastRaw16 || raw24 != lastRaw24) {
            lastSender = Mmsg.readAddress(names, at);
            lastRaw0 = raw0;
            lastRaw8 = raw8;
            lastRaw16 = raw16;
            lastRaw24 = raw24;
        }
        return lastSender;
    }
}
