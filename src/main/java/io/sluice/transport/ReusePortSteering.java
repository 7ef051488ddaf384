package io.sluice.transport;

import io.netty.channel.epoll.Epoll;
import io.netty.channel.unix.Socket;
import io.netty.util.internal.PlatformDependent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Steers each datagram arriving at a SO_REUSEPORT group to the socket whose index is the number of
 * the CPU that received it, modulo the group's size, instead of the kernel's hash of addresses and
 * ports: a three-instruction classic BPF program attached with SO_ATTACH_REUSEPORT_CBPF (Linux 4.5
 * and later; a program that returns an index past the group falls back to the hash). The JDK has
 * no option for it; Netty's raw socket option passes the program's address through.
 */
public final class ReusePortSteering {
    private static final int SOL_SOCKET = 1;
    private static final int SO_ATTACH_REUSEPORT_CBPF = 51;
    /** struct sock_fprog on 64-bit Linux: a u16 count, padding, then a pointer to the instructions. */
    private static final int FPROG_BYTES = 16;
    private static final int FPROG_FILTER_OFFSET = 8;
    /** struct sock_filter: u16 code, u8 jt, u8 jf, u32 k. */
    private static final int INSTRUCTION_BYTES = 8;
    /** SKF_AD_OFF + SKF_AD_CPU: "load the current CPU's number". */
    private static final int LOAD_CPU = -0x1000 + 36;
    private static final short LD_W_ABS = 0x20;
    private static final short ALU_MOD_K = 0x94;
    private static final short RET_A = 0x16;

    private ReusePortSteering() {
    }

    /**
     * Attaches the program to the group the socket {@code member} (a descriptor) belongs to, once
     * all {@code sockets} of it are bound (socket i is the i-th bound).
     *
     * @throws RuntimeException when the kernel does not take it
     */
    public static void byCpu(int member, int sockets) {
        Epoll.ensureAvailability(); // loads the native library that sets the option
        if (!PlatformDependent.hasUnsafe()) {
            throw new IllegalStateException("no native buffer addresses without sun.misc.Unsafe");
        }
        ByteBuffer code = ByteBuffer.allocateDirect(3 * INSTRUCTION_BYTES).order(ByteOrder.nativeOrder());
        instruction(code, LD_W_ABS, LOAD_CPU);
        instruction(code, ALU_MOD_K, sockets);
        instruction(code, RET_A, 0);
        ByteBuffer prog = ByteBuffer.allocateDirect(FPROG_BYTES).order(ByteOrder.nativeOrder());
        prog.putShort(0, (short) 3);
        prog.putLong(FPROG_FILTER_OFFSET, PlatformDependent.directBufferAddress(code));
        try {
            new Socket(member).setRawOpt(SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, prog); // Socket(fd) only wraps it
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        } finally {
            Reference.reachabilityFence(code); // the kernel copies the program during the call
        }
    }

    private static void instruction(ByteBuffer code, short op, int k) {
        code.putShort(op).put((byte) 0).put((byte) 0).putInt(k);
    }
}
