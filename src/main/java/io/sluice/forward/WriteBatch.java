package io.sluice.forward;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.SingleThreadEventLoop;
import io.sluice.pipeline.MessageTap;
import io.sluice.pipeline.Responder;
import io.sluice.transport.UdpSocket;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The writes of one event loop's wake-up. The first datagram of a wake-up leaves at once; the
 * rest wait for the end of the wake-up, after the loop has handled everything epoll reported and
 * run its tasks, and leave together, as do the flushes of the TCP connections written to.
 *
 * <p>Why both: at 20,000 qps a wake-up mostly holds one query or one reply, and sending it at once
 * lets its answer come back while the loop is still awake (p50 0.029 against 0.033 ms with every
 * datagram held, docs/benchmarks.md, "UDP on the JDK's channels"). Under load a wake-up holds a
 * dozen, and a datagram sent while the loop reads on wakes its receiver for each one: every one
 * sent at once lost 13-18% at saturation, every one but the first held lost nothing. Confined to
 * its loop.
 */
final class WriteBatch implements Responder {
    /** How many of the channels last listed {@link #needsFlush} looks through. */
    private static final int RECENT = 8;
    private final SingleThreadEventLoop loop;
    private final ForwardMeters meters;
    private final List<Channel> unflushed = new ArrayList<>();
    private final Runnable flushTask = this::flush;
    /** Run after each flush: the end of a batch (the upstream links draw their next socket). */
    private final Runnable afterFlush;
    /** What sees each answer sent (dnstap), or null. */
    private final MessageTap tap;
    private boolean flushQueued;
    /** This wake-up has sent its one datagram at once: the others wait for the flush. */
    private boolean sentAtOnce;
    /** The datagrams waiting for the flush, as parallel arrays; {@code waiting} of them. */
    private UdpSocket[] from = new UdpSocket[16];
    private InetSocketAddress[] to = new InetSocketAddress[16];
    private ByteBuf[] datagrams = new ByteBuf[16];
    /** The upstream link a waiting query goes on (its failures are the link's), or null for an answer. */
    private UdpUpstreamLink[] links = new UdpUpstreamLink[16];
    private int waiting;

    /** {@code loop} is one of {@code Transport.newGroup}'s, which all run tasks after an iteration. */
    WriteBatch(EventLoop loop, ForwardMeters meters, Runnable afterFlush, MessageTap tap) {
        this.loop = (SingleThreadEventLoop) loop;
        this.tap = tap;
        this.meters = meters;
        this.afterFlush = afterFlush;
    }

    /**
     * Sends {@code message} (whose reference this takes) to a client: as a datagram from
     * {@code socket} to {@code clientAddress}, or framed on the TCP connection {@code client} if it
     * is still open.
     */
    @Override
    public void answer(Channel client, UdpSocket socket, InetSocketAddress clientAddress, ByteBuf message) {
        if (clientAddress != null) {
            if (tap != null) {
                tap.clientResponse(message, null, socket, clientAddress);
            }
            datagram(socket, clientAddress, message, null);
        } else if (client.isActive()) {
            if (tap != null) {
                tap.clientResponse(message, client, null, null);
            }
            client.write(message, client.voidPromise());
            needsFlush(client);
        } else {
            message.release();
        }
    }

    /** Sends {@code query} (whose reference this takes) on {@code link}'s connected socket. */
    void query(UdpUpstreamLink link, ByteBuf query) {
        datagram(link.socket(), null, query, link);
    }

    private void datagram(UdpSocket socket, InetSocketAddress address, ByteBuf message, UdpUpstreamLink link) {
        queueFlush();
        if (!sentAtOnce) {
            sentAtOnce = true;
            send(socket, address, message, link);
            return;
        }
        if (waiting == datagrams.length) {
            int n = waiting * 2;
            from = Arrays.copyOf(from, n);
            to = Arrays.copyOf(to, n);
            datagrams = Arrays.copyOf(datagrams, n);
            links = Arrays.copyOf(links, n);
        }
        from[waiting] = socket;
        to[waiting] = address;
        datagrams[waiting] = message;
        links[waiting] = link;
        waiting++;
    }

    /**
     * One datagram to the kernel, released after. One it does not take (a full send buffer) is
     * lost as on the wire, and counted; a client or upstream asks again.
     */
    private void send(UdpSocket socket, InetSocketAddress address, ByteBuf message, UdpUpstreamLink link) {
        try {
            boolean sent = address != null ? socket.send(message, address) : socket.write(message);
            if (!sent) {
                meters.ioErrors.increment();
            }
        } catch (IOException e) {
            if (link != null) {
                link.failed(e);
            } else {
                meters.ioErrors.increment(); // e.g. an address the kernel has no route to
            }
        } finally {
            message.release();
        }
    }

    /**
     * {@code ch} was written to: flush it with the rest at the end of this wake-up. Only the last
     * few channels listed are looked through: writes to one channel mostly come together (a
     * connection's answers), a second flush of a channel is a cheap no-op, and a wake-up that
     * writes to a thousand TCP clients does not compare each with all.
     */
    void needsFlush(Channel ch) {
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
            // After the wake-up's I/O and tasks, not as a task: Netty reads the clock five times
            // around a wake-up's tasks and none when there are only these (__vdso_clock_gettime
            // 4.3% of the samples at 20k qps before, 3.1% after: docs/benchmarks.md, "The flush
            // after the loop's tasks").
            loop.executeAfterEventLoopIteration(flushTask);
        }
    }

    private void flush() {
        flushQueued = false;
        sentAtOnce = false;
        for (int i = 0; i < waiting; i++) {
            send(from[i], to[i], datagrams[i], links[i]);
            from[i] = null;
            to[i] = null;
            datagrams[i] = null;
            links[i] = null;
        }
        waiting = 0;
        for (int i = 0; i < unflushed.size(); i++) {
            unflushed.get(i).flush();
        }
        unflushed.clear();
        afterFlush.run();
    }
}
