package io.sluice.forward;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.DatagramPacket;
import java.net.PortUnreachableException;

/**
 * One UDP socket connected to one upstream, from its own kernel-chosen source port, until
 * {@link UpstreamLinks} replaces it. Replies are matched by ID; the kernel only delivers
 * datagrams from the upstream, and the sender is checked again all the same.
 */
final class UdpUpstreamLink extends UpstreamLink {
    private final Forwarder forwarder;
    private DatagramChannel channel;

    UdpUpstreamLink(Forwarder forwarder, Upstream upstream) {
        super(upstream);
        this.forwarder = forwarder;
    }

    void bind(DatagramChannel channel) {
        this.channel = channel;
    }

    void close() {
        if (channel != null) {
            channel.close();
        }
    }

    @Override
    void send(PendingQuery q) {
        // The buffer itself, not a duplicate: a datagram write leaves its indices alone (a partial
        // TCP write moves the reader index, hence TcpUpstreamLink's duplicate).
        channel.write(q.query.retain(), channel.voidPromise());
        forwarder.needsFlush(channel);
    }

    /** Reads replies off the socket into the forwarder. */
    static final class Handler extends SimpleChannelInboundHandler<DatagramPacket> {
        private final Forwarder forwarder;
        private final UdpUpstreamLink link;

        Handler(UdpUpstreamLink link) {
            this.forwarder = link.forwarder;
            this.link = link;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, DatagramPacket packet) {
            forwarder.onReply(link, packet.content(), packet.sender());
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            forwarder.meters().ioErrors.increment();
            if (cause instanceof PortUnreachableException) { // the kernel's report of an ICMP error
                forwarder.refused(link);
            }
        }
    }
}
