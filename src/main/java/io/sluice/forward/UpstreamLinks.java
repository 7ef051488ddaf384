package io.sluice.forward;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.SocketProtocolFamily;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.transport.ReusedReadBuffer;
import io.sluice.transport.Transport;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * One event loop's ways to its upstreams: per upstream, {@code upstream-sockets} UDP sockets
 * connected to it and one pipelined TCP connection. Confined to its loop once started.
 *
 * <p>The UDP sockets are replaced one at a time, so that each lives about
 * {@code upstream-socket-lifetime}: a forger who has learnt the source ports (RFC 5452 names
 * the ways) keeps them only that long. A replaced socket stops taking queries at once and is
 * closed one attempt's timeout later, when every query sent on it has been answered or expired.
 */
final class UpstreamLinks {
    /** Largest UDP reply accepted from an upstream: the largest EDNS payload a client may ask for. */
    static final int MAX_UDP_REPLY_BYTES = 65535;
    /** Past the attempt timeout: the forwarder notices an expiry up to a tick (at most 50 ms) late. */
    private static final long DRAIN_MARGIN_MILLIS = 1000;

    private final Forwarder forwarder;
    private final EventLoop loop;
    private final UpstreamPool pool;
    private final Transport transport;
    private final int socketsPerUpstream;
    private final int connectTimeoutMillis;
    /** Time between two replacements of one upstream's sockets, or 0 for none. */
    private final long rotationMillis;
    /** How long a replaced socket stays open for replies already on their way. */
    private final long drainMillis;
    /** Per upstream, the next of its sockets to replace. */
    private final int[] nextToReplace;
    /** Replaced sockets still open; closed by their own scheduled task, or by {@link #close}. */
    private final Set<UdpUpstreamLink> draining = new HashSet<>();
    private ScheduledFuture<?> rotation;
    private boolean closed;
    /** Connected sockets, by upstream index. */
    private final UdpUpstreamLink[][] udp;
    private final TcpUpstreamLink[] tcp;
    /** Per upstream, the socket this batch's queries leave on, or -1 until the batch picks one. */
    private final int[] batchSocket;
    /** Where upstream replies are read: one reused {@link ReusedReadBuffer} when the transport allows. */
    private final RecvByteBufAllocator replyReads;

    /**
     * @param attemptMillis how long one attempt waits for its reply: the TCP connect timeout, and
     *                      how long a replaced socket stays open
     */
    UpstreamLinks(Forwarder forwarder, EventLoop loop, UpstreamPool pool, Transport transport,
                  int socketsPerUpstream, Duration socketLifetime, long attemptMillis) {
        this.forwarder = forwarder;
        this.loop = loop;
        this.pool = pool;
        this.transport = transport;
        this.socketsPerUpstream = socketsPerUpstream;
        this.connectTimeoutMillis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, attemptMillis));
        this.rotationMillis = socketLifetime.toMillis() / socketsPerUpstream;
        this.drainMillis = attemptMillis + DRAIN_MARGIN_MILLIS;
        this.nextToReplace = new int[pool.size()];
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
            udp[i] = new UdpUpstreamLink[socketsPerUpstream];
            connectUdp(u, udp[i]); // into the array as each connects: close() then sees every one
            tcp[i] = new TcpUpstreamLink(forwarder, u, tcpTemplate, connectTimeoutMillis);
        }
        if (rotationMillis > 0) {
            rotation = loop.scheduleAtFixedRate(this::replaceNext, rotationMillis, rotationMillis, TimeUnit.MILLISECONDS);
        }
    }

    /** Replaces the next socket of every upstream; runs on the loop. */
    private void replaceNext() {
        for (int i = 0; i < udp.length; i++) {
            int slot = nextToReplace[i];
            nextToReplace[i] = (slot + 1) % socketsPerUpstream;
            Upstream u = pool.get(i);
            UdpUpstreamLink fresh = new UdpUpstreamLink(forwarder, u);
            int upstream = i;
            udpBootstrap(u, fresh).connect(u.address()).addListener((ChannelFuture f) -> {
                if (!f.isSuccess() || closed) {
                    if (!closed) {
                        forwarder.meters().ioErrors.increment(); // the old socket carries on
                    }
                    f.channel().close();
                    return;
                }
                fresh.bind((DatagramChannel) f.channel());
                UdpUpstreamLink old = udp[upstream][slot];
                udp[upstream][slot] = fresh;
                draining.add(old);
                loop.schedule(() -> {
                    if (draining.remove(old)) {
                        old.close();
                    }
                }, drainMillis, TimeUnit.MILLISECONDS);
            });
        }
    }

    /**
     * Sockets connected to one upstream, each from its own kernel-chosen port. Connected sockets
     * cost the kernel no route lookup per send (measured: 0.78 s of system CPU per 100k queries
     * unconnected; docs/benchmarks.md, "Upstream sockets") and only ever receive from that upstream.
     */
    private void connectUdp(Upstream u, UdpUpstreamLink[] links) throws InterruptedException {
        for (int i = 0; i < links.length; i++) {
            UdpUpstreamLink link = new UdpUpstreamLink(forwarder, u);
            ChannelFuture f = udpBootstrap(u, link).connect(u.address());
            link.bind((DatagramChannel) f.channel()); // closed by close() even when the connect fails
            links[i] = link;
            f.sync();
        }
    }

    private Bootstrap udpBootstrap(Upstream u, UdpUpstreamLink link) {
        SocketProtocolFamily family = Transport.familyOf(u.address().getAddress());
        return new Bootstrap().group(loop)
                .channelFactory(() -> transport.datagram(family))
                .option(ChannelOption.ALLOCATOR, Transport.ALLOCATOR)
                .option(ChannelOption.SO_RCVBUF, Transport.UDP_RCVBUF_BYTES)
                .option(ChannelOption.RCVBUF_ALLOCATOR, replyReads)
                .handler(new UdpUpstreamLink.Handler(link));
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
        closed = true;
        if (rotation != null) {
            rotation.cancel(false);
        }
        for (UdpUpstreamLink l : draining) {
            l.close();
        }
        draining.clear();
        for (UdpUpstreamLink[] links : udp) {
            for (UdpUpstreamLink l : links == null ? new UdpUpstreamLink[0] : links) {
                if (l != null) {
                    l.close();
                }
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
