package io.sluice.transport;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.LongAdder;

/**
 * Sends a loop's datagrams, one at a time through the JDK's channel; {@link DatagramIo}'s batches
 * send what a wake-up held back a system call per socket. Confined to its loop.
 */
public class DatagramSends {
    /** Where a datagram the kernel would not take is counted, when nobody else is told. */
    protected final LongAdder ioErrors;

    protected DatagramSends(LongAdder ioErrors) {
        this.ioErrors = ioErrors;
    }

    /**
     * One datagram to the kernel, released after: to {@code address}, or to the connected peer when
     * it is null. One it does not take (a full send buffer) is lost as on the wire, and counted; a
     * client or upstream asks again. A failure is told to {@code failure}, or counted when null.
     */
    public final void send(UdpSocket socket, InetSocketAddress address, ByteBuf message, WriteBatch.SendFailure failure) {
        try {
            boolean sent = address != null ? socket.send(message, address) : socket.write(message);
            if (!sent) {
                ioErrors.increment();
            }
        } catch (IOException e) {
            failed(failure, e);
        } finally {
            message.release();
        }
    }

    /**
     * Sends the datagrams of the parallel arrays from place {@code start} up to {@code end}, as
     * {@link #send} does each, and clears their places.
     */
    public void sendAll(UdpSocket[] from, InetSocketAddress[] to, ByteBuf[] datagrams,
                        WriteBatch.SendFailure[] failures, int start, int end) {
        for (int i = start; i < end; i++) {
            send(from[i], to[i], datagrams[i], failures[i]);
            from[i] = null;
            to[i] = null;
            datagrams[i] = null;
            failures[i] = null;
        }
    }

    /** A datagram that could not be sent: told to {@code failure}, or counted (an address the kernel has no route to). */
    protected final void failed(WriteBatch.SendFailure failure, IOException e) {
        if (failure != null) {
            failure.failed(e);
        } else {
            ioErrors.increment();
        }
    }
}
