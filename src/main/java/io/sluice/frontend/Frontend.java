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
import java.util.List;
import java.util.Map;
import java.util.Set;
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
    /** The certificate new TLS and HTTPS connections take, or null without tls-listen and https-listen. */
    private volatile ServerTls.Contexts tls;
    private final List<InetSocketAddress> tlsBound = new ArrayList<>();
    private final List<InetSocketAddress> httpsBound = new ArrayList<>();

    private Frontend(Settings.UdpSteering steering, ClientRules rules, ListenerMeters meters) {
        this.steering = steering;
        this.rules = rules;
        this.meters = meters;
    }

    /**
     * Binds every listen address; each event loop's sockets hand what they read to its pipeline.
     *
     * @throws BindException naming the address and protocol that could not be bound
     */
    public static Frontend bind(Settings settings, Transport transport, EventLoopGroup group,
                                List<Pipeline> pipelines, Registry metrics, ClientRules allowed, Clock clock)
            throws BindException, InterruptedException {
        ListenerMeters meters = new ListenerMeters(metrics);
        Map<EventLoop, Pipeline> byLoop = new IdentityHashMap<>();
        for (Pipeline p : pipelines) {
            byLoop.put(p.loop(), p);
        }
        Frontend frontend = new Frontend(settings.udpSteering(), allowed, meters);
        if (!settings.tlsListen().isEmpty() || !settings.httpsListen().isEmpty()) {
            metrics.gauge("tls_certificate_expiry_timestamp_seconds",
                    "When the certificate served over TLS and HTTPS expires, in seconds since the epoch; a reload reads it again.",
                    frontend::tlsExpiresAt);
        }
        frontend.tcpListener = new TcpListener(byLoop, meters, allowed, frontend.tcpConnections, settings, clock);
        try {
            for (InetSocketAddress address : settings.listen()) {
                frontend.bindOne(address, transport, group, pipelines, frontend.tcpListener);
            }
            if (!settings.tlsListen().isEmpty() || !settings.httpsListen().isEmpty()) {
                frontend.tls = ServerTls.Contexts.load(settings.tlsCertFile(), settings.tlsKeyFile());
                for (InetSocketAddress address : settings.tlsListen()) {
                    frontend.bindTls(address, transport, group, false);
                }
                for (InetSocketAddress address : settings.httpsListen()) {
                    frontend.bindTls(address, transport, group, true);
                }
            }
        } catch (SSLException e) { // checked with the settings: the files changed since
            frontend.close();
            throw new IllegalStateException("tls-cert-file, tls-key-file: " + ServerTls.whatIsWrong(e), e);
        } catch (BindException | InterruptedException | RuntimeException e) {
            frontend.close();
            throw e;
        }
        frontend.startReading();
        return frontend;
    }

    /**
     * Every listener reads from now on, none before all are bound: a client that finds one
     * answering finds them all (what the kernel queued meanwhile is read now).
     */
    private void startReading() {
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
     * DNS over TLS on {@code address}, or over HTTPS: TCP connections as on the listen addresses,
     * each wrapped in TLS with the certificate in force when it was accepted.
     */
    private void bindTls(InetSocketAddress address, Transport transport, EventLoopGroup group, boolean https)
            throws BindException, InterruptedException {
        ServerBootstrap sb = new ServerBootstrap().group(group)
                .channelFactory(transport.server())
                .option(ChannelOption.SO_BACKLOG, TCP_BACKLOG)
                .option(ChannelOption.AUTO_READ, false) // accepts once every listener is bound (startReading)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.ALLOW_HALF_CLOSURE, !https)
                .childOption(ChannelOption.ALLOCATOR, Transport.ALLOCATOR)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ServerTls.Contexts now = tls;
                        if (https) {
                            tcpListener.setUpHttps(ch, now.https());
                        } else {
                            tcpListener.setUp(ch, now.dot());
                        }
                    }
                });
        Channel server = bindOrExplain(sb.bind(address).await(), address, https ? "https" : "tls");
        tcpServers.add(server);
        (https ? httpsBound : tlsBound).add((InetSocketAddress) server.localAddress());
    }

    /**
     * What a reload does with the certificate of tls-listen and https-listen: reads the files again
     * at every reload (a renewed certificate is written in place), for the connections accepted
     * from then on; null without TLS. The files' paths take a restart.
     */
    public Reloadable certificates(Settings started) {
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
                    read = ServerTls.Contexts.load(started.tlsCertFile(), started.tlsKeyFile());
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

    /** The TLS addresses bound, ports resolved; empty without tls-listen. */
    public List<InetSocketAddress> tlsAddresses() {
        return List.copyOf(tlsBound);
    }

    /** The HTTPS addresses bound, ports resolved; empty without https-listen. */
    public List<InetSocketAddress> httpsAddresses() {
        return List.copyOf(httpsBound);
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
        return "listening on " + text(bound) + " (udp x" + udpSocketsPerAddress() + ", tcp)"
                + (tlsAddresses().isEmpty() ? "" : ", " + text(tlsAddresses()) + " (tls, " + ServerTls.provider() + ")")
                + (httpsAddresses().isEmpty() ? "" : ", " + text(httpsAddresses()) + " (https, " + ServerTls.provider() + ")");
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
