package io.sluice.forward;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.DatagramPacket;
import io.sluice.pipeline.Responder;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * The writes of one event loop's wake-up, flushed together. A channel written to is flushed once,
 * by a task that runs after the loop has handled everything epoll reported, so that the kernel
 * gets several datagrams per sendmmsg: the replies read off all upstream sockets in one wake-up
 * leave the client socket together, and a batch of queries leaves an upstream socket together.
 * Confined to its loop.
 */
final class WriteBatch implements Responder {
    /** How many of the channels last listed {@link #needsFlush} looks through. */
    private static final int RECENT = 8;
    private final EventLoop loop;
    private final List<Channel> unflushed = new ArrayList<>();
    private final Runnable flushTask = this::flush;
    /** Run after each flush: the end of a batch (the upstream links draw their next socket). */
    private final Runnable afterFlush;

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
        if (unflushed.isEmpty()) {
            loop.execute(flushTask); // on the loop: queued, run after this wake-up's I/O
        }
        unflushed.add(ch);
    }

    private void flush() {
        for (int i = 0; i < unflushed.size(); i++) {
            unflushed.get(i).flush();
        }
        unflushed.clear();
        afterFlush.run();
    }
}
