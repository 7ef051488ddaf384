package io.sluice.forward;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.SocketProtocolFamily;
import io.sluice.transport.ReusedReadBuffer;
import io.sluice.transport.Transport;
import java.util.Arrays;

/**
 * One event loop's ways to its upstreams: per upstream, {@code upstream-sockets} UDP sockets
 * connected to it and one pipelined TCP connection. Confined to its loop once started.
 */
final class UpstreamLinks {
    /** Largest UDP reply accepted from an upstream: the largest EDNS payload a client may ask for. */
    static final int MAX_UDP_REPLY_BYTES = 65535;

    private final Forwarder forwarder;
    private final EventLoop loop;
    private final UpstreamPool pool;
    private final Transport transport;
    private final int socketsPerUpstream;
    private final int connectTimeoutMillis;
    /** Connected sockets, by upstream index. */
    private final UdpUpstreamLink[][] udp;
    private final TcpUpstreamLink[] tcp;
    /** Per upstream, the socket this batch's queries leave on, or -1 until the batch picks one. */
    private final int[] batchSocket;
    /** Where upstream replies are read: one reused {@link ReusedReadBuffer} when the transport allows. */
    private final RecvByteBufAllocator replyReads;

    UpstreamLinks(Forwarder forwarder, EventLoop loop, UpstreamPool pool, Transport transport,
                  int socketsPerUpstream, int connectTimeoutMillis) {
        this.forwarder = forwarder;
        this.loop = loop;
        this.pool = pool;
        this.transport = transport;
        this.socketsPerUpstream = socketsPerUpstream;
        this.connectTimeoutMillis = connectTimeoutMillis;
        this.udp = new UdpUpstreamLink[pool.size()][];
        this.tcp = new TcpUpstreamLink[pool.size()];
        this.batchSocket = new int[pool.size()];
        Arrays.fill(batchSocket, -1);
        this.replyReads = transport.firesEachReadBeforeTheNext()
                ? new ReusedReadBuffer(Transport.ALLOCATOR, MAX_UDP_REPLY_BYTES, Transport.READS_PER_WAKEUP)
                : new FixedRecvByteBufAllocator(MAX_UDP_REPLY_BYTES).maxMessagesPerRead(Transport.READS_PER_WAKEUP);
    }

    /** Connects the UDP sockets and prepares the TCP connections; called once, from outside the loop. */
    void start() throws InterruptedException {
        Bootstrap tcpTemplate = new Bootstrap().group(loop).channelFactory(transport.socket())
                .option(ChannelOption.ALLOCATOR, Transport.ALLOCATOR);
        for (int i = 0; i < tcp.length; i++) {
            Upstream u = pool.get(i);
            udp[i] = connectUdp(u);
            tcp[i] = new TcpUpstreamLink(forwarder, u, tcpTemplate, connectTimeoutMillis);
        }
    }

    /**
     * Sockets connected to one upstream, each from its own kernel-chosen port. Connected sockets
     * cost the kernel no route lookup per send (measured: 0.78 s of system CPU per 100k queries
     * unconnected; docs/benchmarks.md, "Upstream sockets") and only ever receive from that upstream.
     */
    private UdpUpstreamLink[] connectUdp(Upstream u) throws InterruptedException {
        UdpUpstreamLink[] links = new UdpUpstreamLink[socketsPerUpstream];
        SocketProtocolFamily family = Transport.familyOf(u.address().getAddress());
        for (int i = 0; i < links.length; i++) {
            UdpUpstreamLink link = new UdpUpstreamLink(forwarder);
            Bootstrap b = new Bootstrap().group(loop)
                    .channelFactory(() -> transport.datagram(family))
                    .option(ChannelOption.ALLOCATOR, Transport.ALLOCATOR)
                    .option(ChannelOption.SO_RCVBUF, Transport.UDP_RCVBUF_BYTES)
                    .option(ChannelOption.RCVBUF_ALLOCATOR, replyReads)
                    .handler(new UdpUpstreamLink.Handler(link));
            link.bind((DatagramChannel) b.connect(u.address()).sync().channel());
            links[i] = link;
        }
        return links;
    }

    /** The link a query to {@code u} goes on: its TCP connection, or this batch's UDP socket. */
    UpstreamLink linkFor(Upstream u, boolean overTcp, QueryIds ids) {
        return overTcp ? tcp[u.index()] : udpLink(u, ids);
    }

    /**
     * The socket is drawn at random once per batch, not per query: a batch's queries then leave in
     * one sendmmsg, and their replies come back together on one socket. Per query a batch of 16
     * spread over 8 sockets left in about 3 datagrams per call (docs/benchmarks.md, "Upstream sockets").
     */
    private UdpUpstreamLink udpLink(Upstream u, QueryIds ids) {
        UdpUpstreamLink[] links = udp[u.index()];
        int s = batchSocket[u.index()];
        if (s < 0) {
            s = ids.nextIndex(links.length);
            batchSocket[u.index()] = s;
        }
        return links[s];
    }

    /** The batch has left: the next one draws its sockets anew. */
    void endOfBatch() {
        Arrays.fill(batchSocket, -1);
    }

    /** Closes every socket and connection; call on the loop. */
    void close() {
        for (UdpUpstreamLink[] links : udp) {
            for (UdpUpstreamLink l : links == null ? new UdpUpstreamLink[0] : links) {
                l.close();
            }
        }
        for (TcpUpstreamLink l : tcp) {
            if (l != null) {
                l.close();
            }
        }
        if (replyReads instanceof ReusedReadBuffer shared) {
            shared.release(); // the sockets closed above were its only readers
        }
    }
}
