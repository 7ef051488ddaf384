package io.sluice.transport;

import io.netty.buffer.ByteBuf;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.LongAdder;

/**
 * Sends what a wake-up held back with a {@code sendmmsg} per socket (and per
 * {@link #BATCH} datagrams), each socket's in the order they were queued. The datagrams are sent
 * from their own buffers; one not in native memory goes through the JDK's channel.
 */
final class MmsgSends extends DatagramSends {
    static final int BATCH = 64;

    private final MemorySegment vec;
    private final MemorySegment iovs;
    private final MemorySegment names;
    private final MemorySegment state;
    /** The places, in the caller's arrays, of the batch being sent. */
    private final int[] batch = new int[BATCH];

    MmsgSends(LongAdder ioErrors) {
        super(ioErrors);
        Arena arena = Arena.ofAuto();
        vec = arena.allocate(Mmsg.MMSGHDR * BATCH, 8);
        iovs = arena.allocate(Mmsg.IOVEC * BATCH, 8);
        names = arena.allocate(Mmsg.SOCKADDR * BATCH, 8);
        state = Mmsg.callState(arena);
        for (int i = 0; i < BATCH; i++) {
            long h = i * Mmsg.MMSGHDR;
            vec.set(ValueLayout.ADDRESS, h + Mmsg.MSG_IOV, iovs.asSlice(i * Mmsg.IOVEC, Mmsg.IOVEC));
            vec.set(ValueLayout.JAVA_LONG, h + Mmsg.MSG_IOVLEN, 1);
        }
    }

    @Override
    public void sendAll(UdpSocket[] from, InetSocketAddress[] to, ByteBuf[] datagrams,
                        WriteBatch.SendFailure[] failures, int start, int end) {
        for (int first = start; first < end; first++) {
            UdpSocket socket = from[first];
            if (socket == null) { // already sent, in an earlier batch
                continue;
            }
            int count = 0;
            for (int i = first; i < end && count < BATCH; i++) {
                if (from[i] != socket) {
                    continue;
                }
                ByteBuf m = datagrams[i];
                if (socket.isOpen() && place(count, socket, to[i], m)) {
                    batch[count++] = i;
                } else {
                    send(socket, to[i], m, failures[i]); // through the JDK's channel, which says what is wrong
                    clear(from, to, datagrams, failures, i);
                }
            }
            if (count > 0) {
                sendBatch(socket, count, datagrams, failures);
                for (int k = 0; k < count; k++) {
                    int i = batch[k];
                    datagrams[i].release();
                    clear(from, to, datagrams, failures, i);
                }
            }
        }
    }

    /**
     * Puts the datagram in the batch's place {@code k}; false when it has no native address (a heap
     * buffer) or the socket cannot reach its peer.
     */
    private boolean place(int k, UdpSocket socket, InetSocketAddress to, ByteBuf m) {
        long address = addressOf(m);
        if (address == 0) {
            return false;
        }
        long h = k * Mmsg.MMSGHDR;
        if (to == null) { // a connected socket's: the kernel refuses a name there
            vec.set(ValueLayout.JAVA_LONG, h + Mmsg.MSG_NAME, 0L);
            vec.set(ValueLayout.JAVA_INT, h + Mmsg.MSG_NAMELEN, 0);
        } else {
            int length = Mmsg.writeAddress(names, k * Mmsg.SOCKADDR, to, socket.ipv6());
            if (length == 0) {
                return false;
            }
            vec.set(ValueLayout.JAVA_LONG, h + Mmsg.MSG_NAME, names.address() + k * Mmsg.SOCKADDR);
            vec.set(ValueLayout.JAVA_INT, h + Mmsg.MSG_NAMELEN, length);
        }
        iovs.set(ValueLayout.JAVA_LONG, k * Mmsg.IOVEC, address);
        iovs.set(ValueLayout.JAVA_LONG, k * Mmsg.IOVEC + 8, m.readableBytes());
        return true;
    }

    /**
     * Sends the batch's {@code count} datagrams. One the kernel refuses is told to its failure (or
     * counted) and the rest go on; a full send buffer loses the rest of the batch, counted, as a
     * channel's send would each. A call that sent some returns their number and drops the error
     * that stopped it: a pending ICMP error (port unreachable) is then not told, and the next call
     * sends the datagram it stopped at; the socket's reads report the next one.
     */
    private void sendBatch(UdpSocket socket, int count, ByteBuf[] datagrams, WriteBatch.SendFailure[] failures) {
        int fd = socket.descriptor();
        for (int sent = 0; sent < count; ) {
            int n = Mmsg.sendmmsg(state, fd, sent == 0 ? vec : vec.asSlice(sent * Mmsg.MMSGHDR), count - sent);
            if (n > 0) {
                sent += n;
                continue;
            }
            int errno = n < 0 ? Mmsg.errno(state) : Mmsg.EAGAIN;
            if (errno == Mmsg.EINTR) {
                continue;
            }
            if (errno == Mmsg.EAGAIN) {
                ioErrors.add(count - sent);
                return;
            }
            failed(failures[batch[sent]], Mmsg.error("sendmmsg", errno));
            sent++;
        }
    }

    /**
     * Where the readable bytes of {@code m} are in native memory, or 0. Netty knows the address of
     * its direct buffers while it may use {@code sun.misc.Unsafe} (on JDK 24+ only with
     * {@code --sun-misc-unsafe-memory-access=allow}); otherwise the buffer's NIO view tells it.
     */
    private static long addressOf(ByteBuf m) {
        if (m.hasMemoryAddress()) {
            return m.memoryAddress() + m.readerIndex();
        }
        if (m.isDirect() && m.nioBufferCount() == 1) {
            return MemorySegment.ofBuffer(m.internalNioBuffer(m.readerIndex(), m.readableBytes())).address();
        }
        return 0;
    }

    private static void clear(UdpSocket[] from, InetSocketAddress[] to, ByteBuf[] datagrams,
                              WriteBatch.SendFailure[] failures, int i) {
        from[i] = null;
        to[i] = null;
        datagrams[i] = null;
        failures[i] = null;
    }
}
