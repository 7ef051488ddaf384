package io.sluice.forward;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.unix.Socket;
import io.sluice.pipeline.Responder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * The writes of one event loop's wake-up, flushed together. A channel written to is flushed once,
 * by a task that runs after the loop has handled everything epoll reported, so that the kernel
 * gets several datagrams per sendmmsg: the replies read off all upstream sockets in one wake-up
 * leave the client socket together, and a batch of queries leaves an upstream socket together.
 *
 * <p>A wake-up's only UDP answer skips Netty's channel: it is held until the flush and then sent
 * straight to its listener's socket (epoll), which at 20,000 qps, about one answer a wake-up, cost
 * less than the channel's queue and sendmmsg (docs/benchmarks.md, "CPU at 20k qps"). A second
 * answer in the same wake-up sends the held one through the channel too, so that a busy loop
 * keeps its sendmmsg. Confined to its loop.
 */
final class WriteBatch implements Responder {
    /** How many of the channels last listed {@link #needsFlush} looks through. */
    private static final int RECENT = 8;
    private final EventLoop loop;
    private final List<Channel> unflushed = new ArrayList<>();
    private final Runnable flushTask = this::flush;
    /** Run after each flush: the end of a batch (the upstream links draw their next socket). */
    private final Runnable afterFlush;
    private boolean flushQueued;
    /** The wake-up's one UDP answer so far, held for a direct send; null when none is. */
    private ByteBuf held;
    private Channel heldOn;
    private InetSocketAddress heldTo;

    WriteBatch(EventLoop loop, Runnable afterFlush) {
        this.loop = loop;
        this.afterFlush = afterFlush;
    }

    /**
     * Sends {@code message} (whose reference this takes) to a client: as a datagram to
     * {@code clientAddress}, or framed on the TCP connection {@code client} if it is still open.
     */
    @Override
    public void answer(Channel client, InetSocketAddress clientAddress, ByteBuf message) {
        if (clientAddress != null) {
            if (held == null && client instanceof EpollDatagramChannel && message.hasMemoryAddress()) {
                held = message;
                heldOn = client;
                heldTo = clientAddress;
                queueFlush();
                return;
            }
            writeHeld();
            client.write(new DatagramPacket(message, clientAddress), client.voidPromise());
        } else if (client.isActive()) {
            client.write(message, client.voidPromise());
        } else {
            message.release();
            return;
        }
        needsFlush(client);
    }

    /**
     * {@code ch} was written to: flush it with the rest at the end of this wake-up. Only the last
     * few channels listed are looked through: writes to one channel mostly come together (a
     * loop's UDP socket, a connection's answers), a second flush of a channel is a cheap no-op,
     * and a wake-up that writes to a thousand TCP clients does not compare each with all.
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
            loop.execute(flushTask); // on the loop: queued, run after this wake-up's I/O
        }
    }

    /** The held answer joins its channel's queue, to leave with the next. */
    private void writeHeld() {
        if (held != null) {
            heldOn.write(new DatagramPacket(held, heldTo), heldOn.voidPromise());
            needsFlush(heldOn);
            held = null;
            heldOn = null;
            heldTo = null;
        }
    }

    private void flush() {
        flushQueued = false;
        if (held != null) {
            sendHeld();
        }
        for (int i = 0; i < unflushed.size(); i++) {
            unflushed.get(i).flush();
        }
        unflushed.clear();
        afterFlush.run();
    }

    /**
     * Sends the held answer with one sendto on its listener's socket. When the kernel does not
     * take it (a full send buffer, a closed socket), it goes through the channel instead, which
     * waits for room or counts the failure as every other write.
     */
    private void sendHeld() {
        ByteBuf m = held;
        Channel on = heldOn;
        InetSocketAddress to = heldTo;
        held = null;
        heldOn = null;
        heldTo = null;
        boolean sent;
        try {
            sent = ((Socket) ((EpollDatagramChannel) on).fd()).sendToAddress(m.memoryAddress(), m.readerIndex(),
                    m.writerIndex(), to.getAddress(), to.getPort()) > 0;
        } catch (IOException e) {
            sent = false;
        }
        if (sent) {
            m.release();
        } else {
            on.write(new DatagramPacket(m, to), on.voidPromise());
            unflushed.add(on);
        }
    }
}
