package io.sluice.transport;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.SingleThreadEventLoop;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * The writes of one event loop's wake-up, to clients and to upstreams alike: one per loop, shared
 * by the loop's routes back to clients and its forwarders. The first datagram of a wake-up leaves
 * at once; the rest wait for the end of the wake-up, after the loop has handled everything epoll
 * reported and run its tasks, and leave together, as do the flushes of the TCP connections
 * written to.
 *
 * <p>Why both: at a moderate rate a wake-up mostly holds one query or one reply, and sending it at
 * once lets its answer come back while the loop is still awake; under load a wake-up holds a dozen,
 * and a datagram sent while the loop reads on wakes its receiver for each one (docs/benchmarks.md,
 * "UDP on the JDK's channels"); those leave a system call per socket when {@link DatagramIo} batches.
 * Confined to its loop.
 */
public final class WriteBatch {
    /** Told that a datagram it sent could not be: an upstream link's socket, whose failures are its own. */
    @FunctionalInterface
    public interface SendFailure {
        void failed(IOException e);
    }

    /** How many of the channels last listed {@link #needsFlush} looks through. */
    private static final int RECENT = 8;
    private final SingleThreadEventLoop loop;
    private final DatagramSends sends;
    private final List<Channel> unflushed = new ArrayList<>();
    private final Runnable flushTask = this::flush;
    /** Run after each flush: the end of a batch (each forwarder's upstream links draw their next socket). */
    private Runnable[] afterFlush = new Runnable[0];
    private boolean flushQueued;
    /** This wake-up has sent its one datagram at once: the others wait for the flush. */
    private boolean sentAtOnce;
    /** The datagrams waiting for the flush, as parallel arrays; {@code waiting} of them. */
    private UdpSocket[] from = new UdpSocket[16];
    private InetSocketAddress[] to = new InetSocketAddress[16];
    private ByteBuf[] datagrams = new ByteBuf[16];
    /** Who a waiting datagram's failure is told to, or null: counted in {@code ioErrors}. */
    private SendFailure[] failures = new SendFailure[16];
    private int waiting;

    /**
     * @param loop     one of {@code Transport.newGroup}'s, which all run tasks after an iteration
     * @param ioErrors where a datagram the kernel would not take is counted
     */
    public WriteBatch(EventLoop loop, LongAdder ioErrors) {
        this.loop = (SingleThreadEventLoop) loop;
        this.sends = DatagramIo.chosen().sends(ioErrors);
    }

    /** Runs {@code task} after every flush from now on, until {@link #removeAfterFlush}; call on the loop. */
    public void addAfterFlush(Runnable task) {
        afterFlush = Arrays.copyOf(afterFlush, afterFlush.length + 1);
        afterFlush[afterFlush.length - 1] = task;
    }

    /** No longer runs {@code task} after a flush; call on the loop. */
    public void removeAfterFlush(Runnable task) {
        afterFlush = Arrays.stream(afterFlush).filter(t -> t != task).toArray(Runnable[]::new);
    }

    /** Sends {@code message} (whose reference this takes) as a datagram from {@code socket} to {@code address}. */
    public void datagram(UdpSocket socket, InetSocketAddress address, ByteBuf message) {
        datagram(socket, address, message, null);
    }

    /**
     * Sends {@code message} (whose reference this takes) on {@code socket}, a connected one, telling
     * {@code failure} if the send fails.
     */
    public void connected(UdpSocket socket, ByteBuf message, SendFailure failure) {
        datagram(socket, null, message, failure);
    }

    /** Writes {@code message} (whose reference this takes) on {@code ch} if it is still open, flushed with the rest. */
    public void write(Channel ch, Object message) {
        if (ch.isActive()) {
            ch.write(message, ch.voidPromise());
            needsFlush(ch);
        } else {
            io.netty.util.ReferenceCountUtil.release(message);
        }
    }

    private void datagram(UdpSocket socket, InetSocketAddress address, ByteBuf message, SendFailure failure) {
        queueFlush();
        if (!sentAtOnce) {
            sentAtOnce = true;
            sends.send(socket, address, message, failure);
            return;
        }
        if (waiting == datagrams.length) {
            int n = waiting * 2;
            from = Arrays.copyOf(from, n);
            to = Arrays.copyOf(to, n);
            datagrams = Arrays.copyOf(datagrams, n);
            failures = Arrays.copyOf(failures, n);
        }
        from[waiting] = socket;
        to[waiting] = address;
        datagrams[waiting] = message;
        failures[waiting] = failure;
        waiting++;
    }

    /**
     * {@code ch} was written to: flush it with the rest at the end of this wake-up. Only the last
     * few channels listed are looked through: writes to one channel mostly come together (a
     * connection's answers), a second flush of a channel is a cheap no-op, and a wake-up that
     * writes to a thousand TCP clients does not compare each with all.
     */
    public void needsFlush(Channel ch) {
        for (int i = unflushed.size() - 1, last = Math.max(0, unflushed.size() - RECENT); i >= last; i--) {
            if (unflushed.get(i) == ch) {
                return;
            }
        }
        queueFlush();
        unflushed.add(ch);
    }

    private void queueFlush() {
        if (!flushQueued) {
            flushQueued = true;
            // After the wake-up's I/O and tasks, not as a task: Netty reads the clock several times
            // around a wake-up's tasks and none when there are only these (docs/benchmarks.md,
            // "The flush after the loop's tasks").
            loop.executeAfterEventLoopIteration(flushTask);
        }
    }

    private void flush() {
        flushQueued = false;
        sentAtOnce = false;
        // A failure told during the sends may queue more (its queries sent on to the next upstream):
        // they leave in this flush too, after those before them.
        UdpSocket[] before = from;
        for (int sent = 0; sent < waiting; ) {
            int end = waiting;
            sends.sendAll(from, to, datagrams, failures, sent, end);
            sent = end;
        }
        if (from != before) { // grown meanwhile: the places copied while their send was under way are cleared here
            Arrays.fill(from, 0, waiting, null);
            Arrays.fill(to, 0, waiting, null);
            Arrays.fill(datagrams, 0, waiting, null);
            Arrays.fill(failures, 0, waiting, null);
        }
        waiting = 0;
        for (int i = 0; i < unflushed.size(); i++) {
            unflushed.get(i).flush();
        }
        unflushed.clear();
        for (Runnable task : afterFlush) {
            task.run();
        }
    }
}
