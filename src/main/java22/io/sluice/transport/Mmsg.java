package io.sluice.transport;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.io.IOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.PortUnreachableException;
import java.net.UnknownHostException;
import java.nio.ByteOrder;
import java.util.concurrent.atomic.LongAdder;

/**
 * {@link DatagramIo}'s batches: {@code recvmmsg(2)} and {@code sendmmsg(2)} called through the
 * Foreign Function and Memory API, with the C layouts of Linux on a 64-bit machine (LP64). Compiled
 * for JDK 22+ apart from the rest (src/main/java22) and loaded by name only there.
 */
final class Mmsg extends DatagramIo {
    static final int MSG_DONTWAIT = 0x40;
    static final int EAGAIN = 11;
    static final int EINTR = 4;
    static final int ECONNREFUSED = 111;
    static final short AF_INET = 2;
    static final short AF_INET6 = 10;

    /** struct mmsghdr: a struct msghdr, then the length the kernel read or sent; 8-aligned. */
    static final long MMSGHDR = 64;
    static final long MSG_NAME = 0;
    static final long MSG_NAMELEN = 8;
    static final long MSG_IOV = 16;
    static final long MSG_IOVLEN = 24;
    static final long MSG_FLAGS = 48;
    static final long MSG_LEN = 56;
    /** struct iovec: base, length. */
    static final long IOVEC = 16;
    /** Room for a struct sockaddr_in6 (28 bytes), which also holds a sockaddr_in. */
    static final long SOCKADDR = 32;
    static final int SOCKADDR_IN = 16;
    static final int SOCKADDR_IN6 = 28;

    static final ValueLayout.OfShort PORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private static final MemoryLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    /** int recvmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags, struct timespec *timeout) */
    private static final MethodHandle RECVMMSG;
    /** int sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags) */
    private static final MethodHandle SENDMMSG;

    static {
        Linker linker = Linker.nativeLinker();
        Linker.Option errno = Linker.Option.captureCallState("errno");
        RECVMMSG = linker.downcallHandle(linker.defaultLookup().find("recvmmsg").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS), errno);
        SENDMMSG = linker.downcallHandle(linker.defaultLookup().find("sendmmsg").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT), errno);
    }

    /** Refuses when this code may not call native code: the JVM would warn at the first call, or refuse it. */
    Mmsg() {
        if (!Mmsg.class.getModule().isNativeAccessEnabled()) {
            throw new IllegalStateException("native access is not enabled (--enable-native-access=ALL-UNNAMED)");
        }
    }

    @Override
    public DatagramBuffer buffer(int bytes) {
        return new MmsgBuffer(bytes);
    }

    @Override
    public DatagramSends sends(LongAdder ioErrors) {
        return new MmsgSends(ioErrors);
    }

    @Override
    public String toString() {
        return "in batches (recvmmsg, sendmmsg)";
    }

    /** The call's result: datagrams read, or -1 with the error number in {@code state}. */
    static int recvmmsg(MemorySegment state, int fd, MemorySegment vec, int count) {
        try {
            return (int) RECVMMSG.invokeExact(state, fd, vec, count, MSG_DONTWAIT, MemorySegment.NULL);
        } catch (Throwable e) {
            throw new IllegalStateException("recvmmsg", e);
        }
    }

    /** The call's result: datagrams sent, or -1 with the error number in {@code state}. */
    static int sendmmsg(MemorySegment state, int fd, MemorySegment vec, int count) {
        try {
            return (int) SENDMMSG.invokeExact(state, fd, vec, count, MSG_DONTWAIT);
        } catch (Throwable e) {
            throw new IllegalStateException("sendmmsg", e);
        }
    }

    /** Where a call's error number is left. */
    static MemorySegment callState(java.lang.foreign.Arena arena) {
        return arena.allocate(CALL_STATE);
    }

    static int errno(MemorySegment state) {
        return (int) ERRNO.get(state, 0L);
    }

    /** The failed call's error as the JDK's channels would throw it. */
    static IOException error(String call, int errno) {
        if (errno == ECONNREFUSED) {
            return new PortUnreachableException(call + ": connection refused (an ICMP port unreachable)");
        }
        return new IOException(call + ": error " + errno);
    }

    /**
     * Writes {@code to} as the struct sockaddr a socket of its family takes at {@code at}: a mapped
     * address for an IPv4 peer of an IPv6 socket. Returns its length, or 0 when the socket cannot
     * reach it (an IPv6 peer of an IPv4 socket).
     */
    static int writeAddress(MemorySegment names, long at, InetSocketAddress to, boolean ipv6) {
        InetAddress address = to.getAddress();
        byte[] bytes = address.getAddress();
        int port = to.getPort();
        if (!ipv6) {
            if (bytes.length != 4) {
                return 0;
            }
            names.set(ValueLayout.JAVA_SHORT, at, AF_INET);
            names.set(PORT, at + 2, (short) port);
            MemorySegment.copy(bytes, 0, names, ValueLayout.JAVA_BYTE, at + 4, 4);
            names.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 8, 0L);
            return SOCKADDR_IN;
        }
        names.set(ValueLayout.JAVA_SHORT, at, AF_INET6);
        names.set(PORT, at + 2, (short) port);
        names.set(ValueLayout.JAVA_INT_UNALIGNED, at + 4, 0); // flow information
        if (bytes.length == 4) { // ::ffff:a.b.c.d
            names.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 8, 0L);
            names.set(ValueLayout.JAVA_INT_UNALIGNED, at + 16, 0);
            names.set(ValueLayout.JAVA_BYTE, at + 18, (byte) 0xff);
            names.set(ValueLayout.JAVA_BYTE, at + 19, (byte) 0xff);
            MemorySegment.copy(bytes, 0, names, ValueLayout.JAVA_BYTE, at + 20, 4);
            names.set(ValueLayout.JAVA_INT_UNALIGNED, at + 24, 0);
        } else {
            MemorySegment.copy(bytes, 0, names, ValueLayout.JAVA_BYTE, at + 8, 16);
            names.set(ValueLayout.JAVA_INT_UNALIGNED, at + 24, ((Inet6Address) address).getScopeId());
        }
        return SOCKADDR_IN6;
    }

    /** The struct sockaddr the kernel wrote at {@code at} as an address; an IPv4-mapped one as IPv4, as the JDK gives it. */
    static InetSocketAddress readAddress(MemorySegment names, long at) throws UnknownHostException {
        int port = Short.toUnsignedInt(names.get(PORT, at + 2));
        if (names.get(ValueLayout.JAVA_SHORT, at) == AF_INET) {
            byte[] v4 = new byte[4];
            MemorySegment.copy(names, ValueLayout.JAVA_BYTE, at + 4, v4, 0, 4);
            return new InetSocketAddress(Inet4Address.getByAddress(v4), port);
        }
        byte[] v6 = new byte[16];
        MemorySegment.copy(names, ValueLayout.JAVA_BYTE, at + 8, v6, 0, 16);
        int scope = names.get(ValueLayout.JAVA_INT_UNALIGNED, at + 24);
        InetAddress address = scope == 0 ? InetAddress.getByAddress(v6) : Inet6Address.getByAddress(null, v6, scope);
        return new InetSocketAddress(address, port);
    }
}
