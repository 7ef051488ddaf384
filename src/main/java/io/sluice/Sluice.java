package io.sluice;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.sluice.acl.ClientAccess;
import io.sluice.acl.ClientRules;
import io.sluice.admin.AdminServer;
import io.sluice.admin.Operations;
import io.sluice.cache.AnswerCache;
import io.sluice.coalesce.Coalescing;
import io.sluice.config.ConfigException;
import io.sluice.config.Reloadable;
import io.sluice.cookie.Cookies;
import io.sluice.ecs.ClientSubnets;
import io.sluice.config.Settings;
import io.sluice.config.SettingsSource;
import io.sluice.dnstap.Dnstap;
import io.sluice.doh.DnsOverHttps;
import io.sluice.dot.DnsOverTls;
import io.sluice.forward.Forwarding;
import io.sluice.forward.Upstream;
import io.sluice.frontend.Frontend;
import io.sluice.frontend.TlsFrontEnd;
import io.sluice.limit.Clock;
import io.sluice.limit.Limits;
import io.sluice.metrics.MetricsEndpoint;
import io.sluice.metrics.Registry;
import io.sluice.pipeline.InternalErrors;
import io.sluice.pipeline.MessageCheck;
import io.sluice.pipeline.Module;
import io.sluice.pipeline.Pipeline;
import io.sluice.transport.Addresses;
import io.sluice.transport.DatagramIo;
import io.sluice.transport.SocketProtocol;
import io.sluice.transport.Transport;
import io.sluice.transport.WriteBatch;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * A running forwarder: its event loops, modules, upstreams and listeners. Start makes the parts in
 * order, each one's stop pushed on {@link Stops} once made; {@link #close} stops them in reverse,
 * and a start that fails part way does the same with what it made.
 */
public final class Sluice implements AutoCloseable {
    /** The front ends on TLS beside UDP and TCP, each its module's, by the protocol it serves, in binding order. */
    private static final Map<SocketProtocol, TlsFrontEnd> TLS_FRONT_ENDS = new EnumMap<>(Map.of(
            SocketProtocol.DOT, DnsOverTls::bind,
            SocketProtocol.DOH, DnsOverHttps::bind));

    private final Stops stops = new Stops();
    /** As started; {@link Reloader#settings} has what reloads changed since. */
    private final Settings settings;
    private final Registry meters = new Registry();
    private final Transport transport = Transport.best();
    // The parts, made by start in this order. Null where off; written before the server is shared.
    private Dnstap dnstap;
    private ClientAccess access;
    private AnswerCache cache;
    private LimitsModule limitsModule;
    /** DNS cookies, or null when off. */
    private Cookies cookies;
    private ClientSubnets ecs;
    private Forwarding forwarding;
    private final List<Pipeline> pipelines = new ArrayList<>();
    /** The metrics, served on --metrics when asked for. */
    private MetricsEndpoint metrics;
    private Frontend frontend;
    /** The TLS front ends' addresses, ports resolved. */
    /** What each TLS front end bound, ports resolved. */
    private final Map<SocketProtocol, List<InetSocketAddress>> tlsAddresses = new EnumMap<>(SocketProtocol.class);
    private Reloader reloader;
    private AdminServer admin;

    private Sluice(Settings settings) {
        this.settings = settings;
    }

    /** Starts serving with the system clock. */
    public static Sluice start(Settings settings) throws BindException, ConfigException, InterruptedException {
        return start(settings, Clock.system());
    }

    /**
     * Starts serving, the limiters reading {@code clock}. Nothing is left running when it throws.
     *
     * @throws ConfigException when the limits cannot be used (suffix list, overrides)
     * @throws BindException   when a listen address cannot be bound
     */
    public static Sluice start(Settings settings, Clock clock)
            throws BindException, ConfigException, InterruptedException {
        LogLevel.apply(settings.logLevel());
        Sluice s = new Sluice(settings);
        try {
            s.startParts(clock);
            return s;
        } catch (BindException | InterruptedException | RuntimeException | ConfigException e) {
            s.close();
            throw e;
        }
    }

    private void startParts(Clock clock) throws BindException, ConfigException, InterruptedException {
        if (settings.dnstap().on()) {
            dnstap = Dnstap.start(settings.dnstap(), "sluice " + Main.Version.get(), clock::epochNanos, meters);
            stops.push(dnstap::close); // after the loops: it writes out what they queued
        }
        EventLoopGroup group = transport.newGroup(settings.threads(), "sluice-loop");
        stops.push(() -> group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly());
        InternalErrors errors = InternalErrors.declaredIn(meters);
        // The query path, in order; a module made here is stopped after the listeners, before the loops.
        List<Module> modules = new ArrayList<>();
        if (dnstap != null) {
            modules.add(dnstap); // first: what every later stage refuses is in its log too
        }
        access = made(new ClientAccess(settings, meters), modules);
        modules.add(loop -> new MessageCheck(meters));
        cookies = Cookies.start(settings, clock::epochNanos, meters);
        if (cookies != null) {
            modules.add(cookies); // before the cache: its answers carry the cookie too, and it keeps none
        }
        ecs = new ClientSubnets(settings, meters);
        modules.add(ecs); // before the cache, which keys a query with Client Subnet on the network it names
        if (settings.cache().on()) {
            cache = made(new AnswerCache(settings.cache(), settings.threads(), clock::epochNanos, settings.maxUdpSize(),
                    meters), modules);
        }
        limitsModule = made(LimitsModule.start(settings, clock, meters, transport == Transport.EPOLL ? group : null, errors),
                modules);
        modules.add(new Coalescing(settings, meters)); // after the limits: a query joins another once its budget allowed it
        List<EventLoop> loops = new ArrayList<>();
        group.forEach(e -> loops.add((EventLoop) e));
        // One batch of writes per loop, which its routes back to clients and its forwarders share.
        LongAdder ioErrors = meters.ioErrors();
        List<WriteBatch> writes = loops.stream().map(loop -> new WriteBatch(loop, ioErrors)).toList();
        forwarding = Forwarding.start(group, transport, settings, meters, writes, errors, dnstap, limitsModule.gate());
        stops.push(forwarding::close);
        modules.add(forwarding); // last: it answers every query that reaches it
        Pipeline.Meters answers = Pipeline.Meters.declaredIn(meters);
        for (int i = 0; i < loops.size(); i++) {
            pipelines.add(new Pipeline(loops.get(i), writes.get(i), Module.stagesOf(modules, loops.get(i)), errors,
                    clock::epochNanos, answers, dnstap));
        }
        metrics = new MetricsEndpoint(meters);
        stops.push(metrics::close);
        metrics.serve(settings.metrics());
        // What start-up made and keeps (the suffix list's trie, pools, tables) is moved to the
        // old generation now, before any query: else the first young collections under load
        // copy it, the longest pauses of a run (docs/benchmarks.md, "Soak").
        System.gc();
        frontend = Frontend.bind(settings, transport, group, pipelines, meters, access.rules(), clock);
        // drained for the query timeout in force: a reload may have changed it
        stops.push(() -> frontend.drainAndClose((reloader == null ? settings : reloader.settings()).queryTimeout(),
                this::inFlight));
        for (Map.Entry<SocketProtocol, TlsFrontEnd> f : TLS_FRONT_ENDS.entrySet()) {
            tlsAddresses.put(f.getKey(), f.getValue().bind(settings, frontend));
        }
        frontend.startReading(); // every front end is bound: none reads before
        // What a reload hands new settings to, in the order it changes them: a new forwarding
        // generation first, the one part that can still fail once every part has been checked.
        List<Reloadable> reloadable = new ArrayList<>(List.of(forwarding, limitsModule, access, LogLevel.RELOAD));
        if (dnstap != null) {
            reloadable.add(dnstap);
        }
        if (cookies != null) {
            reloadable.add(cookies);
        }
        reloadable.add(ecs);
        Reloadable certificates = frontend.certificates();
        if (certificates != null) {
            reloadable.add(certificates);
        }
        reloader = new Reloader(settings, meters, reloadable);
        modules.forEach(Module::start);
        if (settings.admin() != null) {
            admin = AdminServer.start(settings.admin(), settings.adminTokenFile(), new Operations(new AdminView(
                    reloader, limitsModule.limits(), forwarding, cache, limitsModule.top(), meters, metrics, frontend)));
            stops.push(admin::close);
        }
    }

    /** Adds {@code module} to the query path, its stop to the stops. */
    private <M extends Module> M made(M module, List<Module> modules) {
        stops.push(module::close);
        modules.add(module);
        return module;
    }

    /** Every metric in the Prometheus text format, the JVM's included. */
    public String metricsText() {
        return metrics.text();
    }

    /** The bound listen addresses, ports resolved. */
    public List<InetSocketAddress> addresses() {
        return frontend.addresses();
    }

    /** The addresses {@code protocol} is served on, ports resolved; empty where it is not. */
    public List<InetSocketAddress> addresses(SocketProtocol protocol) {
        return switch (protocol) {
            case UDP, TCP -> frontend.addresses();
            default -> tlsAddresses.getOrDefault(protocol, List.of());
        };
    }

    /** Every counter and gauge. */
    public Registry metrics() {
        return meters;
    }

    /** Client TCP connections that read nothing now, their answers backed up ({@link Frontend#tcpConnectionsNotReading}). */
    public int tcpConnectionsNotReading() {
        return frontend.tcpConnectionsNotReading();
    }

    /** The answer cache, or null when it is off. */
    public AnswerCache cache() {
        return cache;
    }

    public Limits limits() {
        return limitsModule.limits();
    }

    public List<Upstream> upstreams() {
        return forwarding.upstreams();
    }

    /** Where --metrics serves /metrics, or null. */
    public InetSocketAddress metricsAddress() {
        return metrics.address();
    }

    /** Where the admin API is served, or null. */
    public InetSocketAddress adminAddress() {
        return admin == null ? null : admin.address();
    }

    /** Where {@link #reload} reads from; until set, a reload says there is nothing to reload. */
    public void reloadFrom(SettingsSource source) {
        reloader.readFrom(source);
    }

    /**
     * Reads the configuration again and puts in force what can change while running; see {@link Reloader}.
     *
     * @return one line per change
     * @throws ConfigException when the file is invalid (naming file, line and key); nothing changes then
     */
    public List<String> reload() throws ConfigException {
        return reloader.reload();
    }

    /** The startup line: what listens where, for which upstreams, on which transport. */
    public String describe() {
        return frontend.describe() + "; " + forwarding.describe()
                + "; threads " + settings.threads() + "; transport " + transport + ", " + DatagramIo.describe()
                + "; " + access.describe()
                + "; " + (cache == null ? "cache off" : "cache " + cache.capacity() + " answers")
                + "; " + (cookies == null ? "cookies off" : cookies.describe())
                + "; " + ecs.describe()
                + "; " + limitsModule.describe()
                + (metrics.address() == null ? "" : "; metrics http://" + Addresses.text(metrics.address()) + "/metrics")
                + (admin == null ? "" : "; admin http://" + Addresses.text(admin.address()) + "/")
                + (dnstap == null ? "" : "; dnstap " + settings.dnstap().socket())
                + frontend.describeSteering();
    }

    /** A warning for the start, or null: see {@link ClientRules#exposureWarning}. */
    public String exposureWarning() {
        return ClientRules.exposureWarning(settings, frontend.addresses());
    }

    /**
     * Stops taking queries, lets those in flight finish, and the TCP connections answer what they
     * have read, for up to the query timeout, then closes everything.
     */
    @Override
    public void close() {
        stops.close();
    }

    /** Queries in flight or parked now, the retiring generations' included. */
    private int inFlight() {
        return forwarding.inFlight() + Pipeline.parkedIn(pipelines);
    }
}
