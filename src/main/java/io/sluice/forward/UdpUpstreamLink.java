package io.sluice.forward;

import io.sluice.transport.DatagramBuffer;
import io.sluice.transport.SocketProtocol;
import io.sluice.transport.Transport;
import io.sluice.transport.UdpSocket;
import io.sluice.transport.WriteBatch;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.PortUnreachableException;

/**
 * One UDP socket connected to one upstream, from its own kernel-chosen source port, until
 * {@link UpstreamLinks} replaces it. Replies are matched by ID; being connected, the socket is
 * given datagrams from the upstream's address and port only.
 */
final class UdpUpstreamLink extends UpstreamLink implements WriteBatch.SendFailure {
    private final Forwarder forwarder;
    private UdpSocket socket;

    UdpUpstreamLink(Forwarder forwarder, Upstream upstream) {
        super(upstream);
        this.forwarder = forwarder;
    }

    void bind(UdpSocket socket) {
        this.socket = socket;
    }

    UdpSocket socket() {
        return socket;
    }

    void close() {
        if (socket != null) {
            socket.close();
        }
    }

    @Override
    void send(PendingQuery q) {
        // The buffer itself, not a duplicate: a datagram's send leaves its indices alone (a partial
        // TCP write moves the reader index, hence TcpUpstreamLink's duplicate).
        forwarder.writes().connected(socket, q.query.retain(), this);
    }

    @Override
    SocketProtocol protocol() {
        return SocketProtocol.UDP;
    }

    @Override
    InetSocketAddress localAddress() {
        return socket == null ? null : socket.localAddress();
    }

    /** Reads the replies waiting on the socket into the forwarder, through the loop's {@code buffer}. */
    void readReplies(DatagramBuffer buffer) {
        for (int i = 0; i < Transport.READS_PER_WAKEUP; i++) {
            try {
                if (!buffer.read(socket, Transport.READS_PER_WAKEUP - i)) {
                    return;
                }
            } catch (IOException e) {
                failed(e);
                continue; // the error was the socket's one pending report; replies may follow it
            }
            try {
                forwarder.onReply(this, buffer.datagram());
            } catch (RuntimeException e) {
                forwarder.replyFailed(e);
            }
        }
    }

    /**
     * A read or write on the socket failed. Port unreachable is the kernel's report of an ICMP
     * error for an earlier datagram: nothing listens at the upstream.
     */
    @Override
    public void failed(IOException e) {
        forwarder.meters().ioErrors.increment();
        if (e instanceof PortUnreachableException) {
            forwarder.refused(this);
        }
    }
}
