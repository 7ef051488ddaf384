package io.sluice.frontend;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.ssl.SslContext;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.sluice.acl.ClientRules;
import io.sluice.config.ConfigException;
import io.sluice.config.Reloadable;
import io.sluice.config.Setting;
import io.sluice.config.Settings;
import io.sluice.limit.Clock;
import io.sluice.metrics.Registry;
import io.sluice.pipeline.Pipeline;
import io.sluice.transport.Addresses;
import io.sluice.transport.ReusePortSteering;
import io.sluice.transport.ServerTls;
import io.sluice.transport.SocketProtocol;
import io.sluice.transport.Transport;
import io.sluice.transport.UdpSocket;
import java.io.IOException;
import java.net.BindException;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.IntSupplier;
import java.util.stream.Collectors;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The listening side: on every listen address, UDP and TCP on the same port. With epoll each event
 * loop gets its own UDP socket on that port (SO_REUSEPORT) so that all cores read queries, and
 * {@code udp-steering} says which of them reads a datagram; with NIO one socket serves.
 */
public final class Frontend {
    private static final Logger log = LoggerFactory.getLogger(Frontend.class);
    private static final int TCP_BACKLOG = 1024;
    private static final long DRAIN_POLL_MILLIS = 10;
    private static final int EPHEMERAL_BIND_ATTEMPTS = 10;

    private final List<UdpSocket> udp = new ArrayList<>();
    private final List<Channel> tcpServers = new ArrayList<>();
    private final ChannelGroup tcpConnections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private final List<InetSocketAddress> bound = new ArrayList<>();
    private final List<InetSocketAddress> steeredByCpu = new ArrayList<>();
    /** Per event loop, what reads its listening UDP sockets. */
    private final Map<EventLoop, UdpListener> listeners = new IdentityHashMap<>();
    private final Settings.UdpSteering steering;
    private final ClientRules rules;

    private final ListenerMeters meters;
    /** Sets up the client TCP connections; null until {@link #bind} makes it. */
    private TcpListener tcpListener;
    /** The certificate the TLS front ends' new connections take; null until the first of them binds. */
    private volatile ServerTls.Contexts tls;
    /** The addresses of the TLS front ends, by the name the startup line gives them: DNS over TLS's first. */
    private final Map<String, List<InetSocketAddress>> tlsBound = new LinkedHashMap<>();
    private final Settings settings;
    private final Transport transport;
    private final EventLoopGroup group;
    private final Registry metrics;

    private Frontend(Settings settings, Transport transport, EventLoopGroup group, ClientRules rules,
                     Registry metrics) {
        this.settings = settings;
        this.steering = settings.udpSteering();
        this.transport = transport;
        this.group = group;
        this.rules = rules;
        this.metrics = metrics;
        this.meters = new ListenerMeters(metrics);
    }

    /**
     * Binds every listen address (UDP and TCP); each event loop's sockets hand what they read to
     * its pipeline, from {@link #startReading} on. The TLS front ends (DNS over TLS, over HTTPS)
     * bind through {@link #bindTls} meanwhile. What it bound is closed when it throws.
     *
     * @throws BindException naming the address and protocol that could not be bound
     */
    public static Frontend bind(Settings settings, Transport transport, EventLoopGroup group,
                                List<Pipeline> pipelines, Registry metrics, ClientRules allowed, Clock clock)
            throws BindException, InterruptedException {
        Map<EventLoop, Pipeline> byLoop = new IdentityHashMap<>();
        for (Pipeline p : pipelines) {
            byLoop.put(p.loop(), p);
        }
        Frontend frontend = new Frontend(settings, transport, group, allowed, metrics);
        frontend.tcpListener = new TcpListener(byLoop, frontend.meters, allowed, frontend.tcpConnections, settings, clock);
        try {
            for (InetSocketAddress address : settings.listen()) {
                frontend.bindOne(address, transport, group, pipelines, frontend.tcpListener);
            }
        } catch (BindException | InterruptedException | RuntimeException e) {
            frontend.close();
            throw e;
        }
        return frontend;
    }

    /**
     * Binds a front end that speaks {@code protocol} on TLS connections (DNS over TLS, over HTTPS)
     * on {@code addresses}: each connection is held to the bounds every TCP listener shares and
     * its PROXY header read, then put in TLS with the certificate in force when it was accepted
     * ({@code context} of it), then set up by {@code protocol}. Reads nothing before
     * {@link #startReading}.
     *
     * @param name        what the startup line, {@code queries{protocol}} and a bind error call it
     * @param halfClosure whether a client's half-close is answered before the close (framed DNS)
     * @return the addresses bound, ports resolved; none for none (no certificate is read then)
     */
    public List<InetSocketAddress> bindTls(List<InetSocketAddress> addresses, String name, boolean halfClosure,
                                           Function<ServerTls.Contexts, SslContext> context, StreamProtocol protocol)
            throws BindException, InterruptedException {
        if (addresses.isEmpty()) {
            return List.of();
        }
        StreamProtocol.Meters counted = new StreamProtocol.Meters(meters.queries(name), meters.tlsHandshakeFailed,
                meters.tcpIdleClosed, meters.ioErrors);
        readCertificate();
        List<InetSocketAddress> bound = tlsBound.computeIfAbsent(name, n -> new ArrayList<>());
        for (InetSocketAddress address : addresses) {
            ServerBootstrap sb = new ServerBootstrap().group(group)
                    .channelFactory(transport.server())
                    .option(ChannelOption.SO_BACKLOG, TCP_BACKLOG)
                    .option(ChannelOption.AUTO_READ, false) // accepts once every listener is bound (startReading)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childOption(ChannelOption.ALLOW_HALF_CLOSURE, halfClosure)
                    .childOption(ChannelOption.ALLOCATOR, Transport.ALLOCATOR)
                    .childHandler(new ChannelInitializer<>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            tcpListener.setUp(ch, context.apply(tls), protocol, counted);
                        }
                    });
            Channel server = bindOrExplain(sb.bind(address).await(), address, name);
            tcpServers.add(server);
            bound.add((InetSocketAddress) server.localAddress());
        }
        return List.copyOf(bound);
    }

    /**
     * The certificate every TLS front end serves, read once, when the first binds (and again at
     * each reload, {@link #certificates}); the files were checked with the settings.
     */
    private void readCertificate() {
        if (tls != null) {
            return;
        }
        try {
            tls = ServerTls.Contexts.load(settings.tlsCertFile(), settings.tlsKeyFile());
        } catch (SSLException e) { // checked with the settings: the files changed since
            throw new IllegalStateException("tls-cert-file, tls-key-file: " + ServerTls.whatIsWrong(e), e);
        }
        metrics.gauge("tls_certificate_expiry_timestamp_seconds",
                "When the certificate served over TLS and HTTPS expires, in seconds since the epoch; a reload reads it again.",
                this::tlsExpiresAt);
    }

    /**
     * Every listener reads from now on, none before all are bound: a client that finds one
     * answering finds them all (what the kernel queued meanwhile is read now). Call once every
     * front end is bound.
     */
    public void startReading() {
        for (UdpSocket s : udp) {
            s.startReading();
        }
        for (Channel server : tcpServers) {
            server.config().setAutoRead(true);
        }
    }

    private void bindOne(InetSocketAddress address, Transport transport, EventLoopGroup group,
                         List<Pipeline> pipelines, TcpListener tcpListener) throws BindException, InterruptedException {
        if (address.getPort() != 0) {
            checkFree(address);
            bindUdpAndTcp(address, transport, group, pipelines, tcpListener);
            return;
        }
        // Port 0 (tests): UDP picks a free port, which TCP may find taken; try a few ports.
        for (int attempt = 1; ; attempt++) {
            try {
                bindUdpAndTcp(address, transport, group, pipelines, tcpListener);
                return;
            } catch (BindException e) {
                if (attempt == EPHEMERAL_BIND_ATTEMPTS) {
                    throw e;
                }
            }
        }
    }

    private void bindUdpAndTcp(InetSocketAddress address, Transport transport, EventLoopGroup group,
                               List<Pipeline> pipelines, TcpListener tcpListener)
            throws BindException, InterruptedException {
        InetSocketAddress at = address;
        List<UdpSocket> bindings = new ArrayList<>();
        List<Pipeline> readers = transport.reusePort() ? pipelines : pipelines.subList(0, 1);
        for (Pipeline f : readers) {
            UdpListener listener = listeners.computeIfAbsent(f.loop(), l -> new UdpListener(f, meters, rules));
            try {
                UdpSocket s = UdpSocket.bind(transport, f.loop(), at, transport.reusePort(), listener);
                bindings.add(s);
                at = s.localAddress(); // port 0 resolves on the first socket
            } catch (IOException e) {
                closeAll(bindings);
                BindException b = new BindException(Addresses.text(at) + "/udp: " + kernelSays(e, at));
                b.initCause(e);
                throw b;
            }
        }
        boolean steered = bindings.size() > 1 && steering.byCpu(address) && steerByCpu(bindings, at);
        ServerBootstrap sb = new ServerBootstrap().group(group)
                .channelFactory(transport.server())
                .option(ChannelOption.SO_BACKLOG, TCP_BACKLOG)
                .option(ChannelOption.AUTO_READ, false) // accepts once every listener is bound (startReading)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.ALLOW_HALF_CLOSURE, true) // answer, then close (TcpListener)
                .childOption(ChannelOption.ALLOCATOR, Transport.ALLOCATOR)
                .childHandler(tcpListener);
        try {
            tcpServers.add(bindOrExplain(sb.bind(at).await(), at, "tcp"));
        } catch (BindException e) {
            closeAll(bindings);
            throw e;
        }
        udp.addAll(bindings);
        bound.add(at);
        if (steered) {
            steeredByCpu.add(at);
        }
    }

    /**
     * What a reload does with the certificate the TLS front ends serve: reads the files again at
     * every reload (a renewed certificate is written in place), for the connections accepted from
     * then on; null without TLS. The files' paths take a restart.
     */
    public Reloadable certificates() {
        if (tls == null) {
            return null;
        }
        return new Reloadable() {
            private ServerTls.Contexts read;

            @Override
            public Setting.Applied part() {
                return Setting.Applied.RESTART;
            }

            @Override
            public boolean takes(Set<Setting.Applied> changed) {
                return true;
            }

            @Override
            public void check(Settings next) throws ConfigException {
                try {
                    read = ServerTls.Contexts.load(settings.tlsCertFile(), settings.tlsKeyFile());
                } catch (SSLException e) {
                    throw new ConfigException("tls-cert-file, tls-key-file: " + ServerTls.whatIsWrong(e));
                }
            }

            @Override
            public void apply(Settings next) {
                tls = read;
            }

            @Override
            public List<String> report() {
                return List.of("tls-cert-file: read again, for new TLS connections");
            }
        };
    }

    /** When the served certificate expires, seconds since the epoch; 0 without TLS. */
    public long tlsExpiresAt() {
        ServerTls.Contexts now = tls;
        return now == null ? 0 : now.expiresAt();
    }

    /** DNS messages framed as over TCP, for a TLS front end to speak ({@link #bindTls}): DNS over TLS's. */
    public StreamProtocol dnsMessages(SocketProtocol protocol) {
        return tcpListener.dnsMessages(protocol);
    }

    /**
     * Each datagram to the sockets of {@code at} goes to the socket of the CPU that received it.
     * On loopback that is the sender's CPU, so a client keeps to one loop and loops that have no
     * client stay asleep, where the hash would wake each loop in turn (docs/benchmarks.md,
     * "Design choices measured", "UDP steering"). From a NIC, sockets share the load only as far as its
     * receive queues spread it over the CPUs, which is why auto leaves other addresses to the hash.
     */
    private static boolean steerByCpu(List<UdpSocket> group, InetSocketAddress at) {
        try {
            ReusePortSteering.byCpu(group.get(0).descriptor(), group.size());
            return true;
        } catch (RuntimeException e) {
            log.warn("udp-steering: cannot steer {} by CPU ({}); the kernel's hash shares it out",
                    Addresses.text(at), e.getMessage());
            return false;
        }
    }

    private static void closeAll(List<UdpSocket> sockets) {
        for (UdpSocket s : sockets) {
            s.close();
        }
    }

    private static Channel bindOrExplain(ChannelFuture f, InetSocketAddress at, String proto)
            throws BindException {
        if (!f.isSuccess()) {
            BindException e = new BindException(Addresses.text(at) + "/" + proto + ": " + kernelSays(f.cause(), at));
            e.initCause(f.cause());
            throw e;
        }
        return f.channel();
    }

    /**
     * SO_REUSEPORT lets a second process share a port silently when it sets the option too, as a
     * second sluice would. Binding once without it first makes a taken port an error, as operators
     * expect.
     */
    private static void checkFree(InetSocketAddress address) throws BindException {
        try (DatagramSocket ignored = new DatagramSocket(address)) {
            // free
        } catch (IOException e) {
            throw new BindException(Addresses.text(address) + "/udp: " + kernelSays(e, address));
        }
        try (ServerSocket ignored = new ServerSocket(address.getPort(), 1, address.getAddress())) {
            // free
        } catch (IOException e) {
            throw new BindException(Addresses.text(address) + "/tcp: " + kernelSays(e, address));
        }
    }

    /**
     * What the kernel said of a failed bind, in its own words ("address already in use", "cannot
     * assign requested address", "permission denied"), with a hint where one helps.
     */
    static String kernelSays(Throwable e, InetSocketAddress at) {
        String said = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        said = said.replaceFirst("^bind\\(\\.\\.\\) failed: ", "").replaceFirst(" \\(Bind failed\\)$", "");
        said = said.isEmpty() ? said : Character.toLowerCase(said.charAt(0)) + said.substring(1);
        if (said.startsWith("cannot assign requested address")) {
            return said + " (not an address of this host)";
        }
        if (said.startsWith("permission denied") && at.getPort() < 1024) {
            return said + " (ports below 1024 need root or CAP_NET_BIND_SERVICE)";
        }
        return said;
    }

    /** The addresses actually bound, ports resolved, in listen order. */
    public List<InetSocketAddress> addresses() {
        return List.copyOf(bound);
    }

    /** For the startup line: what listens where, over which protocols. */
    public String describe() {
        StringBuilder line = new StringBuilder("listening on " + text(bound) + " (udp x" + udpSocketsPerAddress() + ", tcp)");
        tlsBound.forEach((name, addresses) -> line.append(", ").append(text(addresses))
                .append(" (").append(name).append(", ").append(ServerTls.provider()).append(")"));
        return line.toString();
    }

    /** For the end of the startup line: how each port's datagrams are shared out between its sockets, if it has several. */
    public String describeSteering() {
        if (udpSocketsPerAddress() < 2) {
            return "";
        }
        String how = steeredByCpu.isEmpty() ? "hash" : steeredByCpu.size() == bound.size() ? "cpu"
                : "cpu on " + text(steeredByCpu) + ", hash elsewhere";
        return "; udp steering " + how;
    }

    private static String text(List<InetSocketAddress> addresses) {
        return addresses.stream().map(Addresses::text).collect(Collectors.joining(", "));
    }

    /** UDP sockets per address: the number of event loops reading each port. */
    private int udpSocketsPerAddress() {
        return bound.isEmpty() ? 0 : udp.size() / bound.size();
    }

    /**
     * Stops taking queries and connections. Sockets stay open so that answers to queries already
     * in flight can still be sent.
     */
    public void stopReading() {
        for (Channel ch : tcpServers) {
            ch.close().awaitUninterruptibly();
        }
        for (UdpSocket s : udp) {
            s.stopReading();
        }
        if (tcpListener != null) {
            tcpListener.stop();
        }
    }

    /** Client TCP connections open now; after {@link #stopReading} each closes once it has answered what it read. */
    public int openTcpConnections() {
        return tcpConnections.size();
    }

    /** Client TCP connections open now that read nothing, their answers backed up: for tests, off the query path. */
    public int tcpConnectionsNotReading() {
        int n = 0;
        for (Channel ch : tcpConnections) {
            n += ch.config().isAutoRead() ? 0 : 1;
        }
        return n;
    }

    /**
     * Stops taking queries, lets those in flight and parked ({@code inFlight} counts them) finish,
     * and the TCP connections answer what they have read, for up to {@code timeout}; then closes.
     */
    public void drainAndClose(Duration timeout, IntSupplier inFlight) {
        stopReading();
        long deadline = System.nanoTime() + timeout.toNanos();
        // A query a TCP connection holds back (its client reads its answers slowly) is in no
        // forwarder yet: the connection's close, once it has answered, says it is done.
        while ((inFlight.getAsInt() > 0 || openTcpConnections() > 0) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(DRAIN_POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        close();
    }

    public void close() {
        for (Channel ch : tcpServers) {
            ch.close().awaitUninterruptibly();
        }
        tcpConnections.close().awaitUninterruptibly();
        closeAll(udp);
    }
}
