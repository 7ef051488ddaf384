package io.sluice.forward;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.transport.Addresses;
import io.sluice.transport.DatagramBuffer;
import io.sluice.transport.Transport;
import io.sluice.transport.UdpSocket;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * One event loop's ways to its upstreams: per upstream, {@code upstream-sockets} UDP sockets
 * connected to it and one pipelined TCP connection; for a {@code tls://} upstream, the TLS
 * connection alone. Confined to its loop once started.
 *
 * <p>The UDP sockets are replaced one at a time, so that each lives about
 * {@code upstream-socket-lifetime}: a forger who has learnt the source ports (RFC 5452 names
 * the ways) keeps them only that long. A replaced socket stops taking queries at once and is
 * closed one attempt's timeout later, when every attempt sent on it has been answered or has
 * expired; an attempt sent again elsewhere stays awaited there until then only, and a reply to it
 * after that is lost as on the wire.
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
    /** Connected sockets, by upstream index. */
    private final UdpUpstreamLink[][] udp;
    private final TcpUpstreamLink[] tcp;
    /** Per upstream, the socket this batch's queries leave on, or -1 until the batch picks one. */
    private final int[] batchSocket;
    /** Where every UDP socket of the loop reads its replies. */
    private final DatagramBuffer replies = DatagramBuffer.of(MAX_UDP_REPLY_BYTES);

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
    }

    /** Connects the UDP sockets and prepares the TCP connections; called once, from outside the loop. */
    void start() throws InterruptedException {
        Bootstrap tcpTemplate = new Bootstrap().group(loop).channelFactory(transport.socket())
                .option(ChannelOption.ALLOCATOR, Transport.ALLOCATOR);
        for (int i = 0; i < tcp.length; i++) {
            Upstream u = pool.get(i);
            udp[i] = new UdpUpstreamLink[u.overTls() ? 0 : socketsPerUpstream];
            connectUdp(u, udp[i]); // into the array as each connects: close() then sees every one
            tcp[i] = new TcpUpstreamLink(forwarder, u, tcpTemplate, connectTimeoutMillis,
                    u.overTls() ? pool.tls() : null);
        }
        if (rotationMillis > 0) {
            rotation = loop.scheduleAtFixedRate(this::replaceNext, rotationMillis, rotationMillis, TimeUnit.MILLISECONDS);
        }
    }

    /** Replaces the next socket of every upstream; runs on the loop. */
    private void replaceNext() {
        for (int i = 0; i < udp.length; i++) {
            if (udp[i].length == 0) {
                continue; // a TLS upstream
            }
            int slot = nextToReplace[i];
            nextToReplace[i] = (slot + 1) % socketsPerUpstream;
            UdpUpstreamLink fresh;
            try {
                fresh = connected(pool.get(i));
            } catch (IOException | InterruptedException e) {
                forwarder.meters().ioErrors.increment(); // the old socket carries on
                continue;
            }
            UdpUpstreamLink old = udp[i][slot];
            udp[i][slot] = fresh;
            draining.add(old);
            loop.schedule(() -> {
                if (draining.remove(old)) {
                    old.close();
                }
            }, drainMillis, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Sockets connected to one upstream, each from its own kernel-chosen port. Connected sockets
     * cost the kernel no route lookup per send (docs/benchmarks.md, "Design choices measured",
     * "Upstream sockets") and only ever receive from that upstream.
     */
    private void connectUdp(Upstream u, UdpUpstreamLink[] links) throws InterruptedException {
        for (int i = 0; i < links.length; i++) {
            try {
                links[i] = connected(u);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot open a UDP socket to upstream "
                        + Addresses.text(u.address()) + ": " + e.getMessage(), e);
            }
        }
    }

    private UdpUpstreamLink connected(Upstream u) throws IOException, InterruptedException {
        UdpUpstreamLink link = new UdpUpstreamLink(forwarder, u);
        link.bind(UdpSocket.connect(transport, loop, u.address(), s -> link.readReplies(replies)));
        return link;
    }

    /** The link a query to {@code u} goes on: its TCP (or TLS) connection, or this batch's UDP socket. */
    UpstreamLink linkFor(Upstream u, boolean overStream, QueryIds ids) {
        return overStream ? tcp[u.index()] : udpLink(u, ids);
    }

    /**
     * The socket is drawn at random once per batch, not per query: a batch's replies then come back
     * together on one socket, read in one wake-up. Drawn per query, a batch of 16 left Netty's
     * sendmmsg in about 3 datagrams a call (docs/benchmarks.md, "Upstream sockets"); with one send
     * a datagram the draw per batch is kept, not measured again.
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

    /**
     * The UDP socket for an attempt that asks {@code u} again: another than {@code previous} when
     * there are several, so that the attempt leaves from a new source port as well as under a new ID.
     */
    UpstreamLink retryLinkFor(Upstream u, UpstreamLink previous, QueryIds ids) {
        UdpUpstreamLink[] links = udp[u.index()];
        UdpUpstreamLink l = udpLink(u, ids);
        if (l == previous && links.length > 1) {
            int s = (batchSocket[u.index()] + 1 + ids.nextIndex(links.length - 1)) % links.length;
            batchSocket[u.index()] = s;
            l = links[s];
        }
        return l;
    }

    /** The batch has left: the next one draws its sockets anew. */
    void endOfBatch() {
        Arrays.fill(batchSocket, -1);
    }

    /** Closes every socket and connection; call on the loop. */
    void close() {
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
    }
}
