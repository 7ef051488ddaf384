package io.sluice;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.sluice.acl.ClientAccess;
import io.sluice.acl.ClientRules;
import io.sluice.admin.AdminServer;
import io.sluice.admin.Operations;
import io.sluice.backend.Backends;
import io.sluice.cache.AnswerCache;
import io.sluice.config.BackendSettings;
import io.sluice.config.ConfigException;
import io.sluice.config.Settings;
import io.sluice.config.UpstreamAddress;
import io.sluice.dnstap.Dnstap;
import io.sluice.flood.Floods;
import io.sluice.forward.ForwardStage;
import io.sluice.forward.Forwarding;
import io.sluice.forward.Upstream;
import io.sluice.frontend.Frontend;
import io.sluice.limit.Backend;
import io.sluice.limit.Clock;
import io.sluice.limit.LimitMeters;
import io.sluice.limit.LimitStage;
import io.sluice.limit.Limits;
import io.sluice.top.TopDomains;
import io.sluice.metrics.MetricsEndpoint;
import io.sluice.metrics.Registry;
import io.sluice.pipeline.InternalErrors;
import io.sluice.pipeline.MessageCheck;
import io.sluice.pipeline.Module;
import io.sluice.pipeline.OnLoop;
import io.sluice.pipeline.Pipeline;
import io.sluice.pipeline.Stage;
import io.sluice.pipeline.UpstreamReplies;
import io.sluice.transport.Addresses;
import io.sluice.transport.Transport;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running forwarder: its event loops, upstreams and listeners. Start makes the parts in order,
 * each pushed on {@link #stops} once made; {@link #close} stops them in reverse, and a start that
 * fails part way does the same with what it made.
 */
public final class Sluice implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Sluice.class);
    private static final long DRAIN_POLL_MILLIS = 10;
    /** Domains in the top-K gauges of /metrics. */
    private static final int TOP_GAUGES = 20;

    /** A part's stop: run once, by close or by a failed start. */
    @FunctionalInterface
    private interface Stop {
        void run() throws Exception;
    }

    /** The parts' stops, the last made on top. Touched by start and then by close only. */
    private final Deque<Stop> stops = new ArrayDeque<>();
    /** As started; {@link Reloader#settings} has what reloads changed since. */
    private final Settings settings;
    private final Registry meters = new Registry();
    private final Transport transport = Transport.best();
    /** {@link #close} has begun: a second call waits for the first to end, and does nothing more. */
    private final AtomicBoolean closing = new AtomicBoolean();
    private final CountDownLatch closed = new CountDownLatch(1);
    // The parts, made by start in this order. Null where off; written before the server is shared.
    private Limits limits;
    private Dnstap dnstap;
    /** allow-clients and acl-action as the loops and the TCP listener read them; a reload replaces them. */
    private ClientRules clientRules;
    private AnswerCache cache;
    /** What runs beside the limiter's counters (Redis), or null when nothing is limited. */
    private Backend backend;
    private Forwarding forwarding;
    /** The busiest domains, worked out while the admin API is on; else null. */
    private TopDomains top;
    private final List<Pipeline> pipelines = new ArrayList<>();
    /** The metrics, served on --metrics when asked for. */
    private MetricsEndpoint metrics;
    private Frontend frontend;
    private Reloader reloader;
    private AdminServer admin;

    /** Where a reload reads its settings. */
    @FunctionalInterface
    public interface SettingsSource {
        Settings read() throws ConfigException;
    }

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
        limits = Limits.from(settings.limits(), clock, policies -> Backends.counters(settings, policies),
                settings.admin() != null || settings.configFile() != null);
        stops.push(limits::close);
        if (settings.dnstap().on()) {
            dnstap = Dnstap.start(settings.dnstap(), "sluice " + Main.Version.get(), clock::epochNanos, meters);
            stops.push(dnstap::close); // after the loops: it writes out what they queued
        }
        ClientAccess access = new ClientAccess(settings, meters);
        stops.push(access::close);
        clientRules = access.rules();
        EventLoopGroup group = transport.newGroup(settings.threads(), "sluice-loop");
        stops.push(() -> group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly());
        InternalErrors errors = new InternalErrors(meters.counter("internal_errors",
                "Exceptions caught on the query path (a stage, or what sees the upstreams' answers): a bug, logged with its stack at most once a minute; the query is dropped, or goes on without what failed."));
        cache = settings.cache().on() ? new AnswerCache(settings.cache(), settings.threads(), clock::epochNanos,
                settings.maxUdpSize(), meters) : null;
        if (limits.active()) {
            backend = Backends.start(settings, limits.limiter(), meters, transport == Transport.EPOLL ? group : null,
                    errors);
            stops.push(backend::close); // before the loops stop: Redis's connection may be on one
        }
        if (settings.admin() != null && limits.active()) {
            top = new TopDomains();
            stops.push(top::close);
            limits.limiter().trackUnlimited(); // so that the busiest domains include unlimited ones
            top.declareGauges(meters, TOP_GAUGES);
        }
        // The query path, in order: a new stage is one class and one module here.
        List<Module> modules = new ArrayList<>();
        if (dnstap != null) {
            modules.add(dnstap); // first: what every later stage refuses is in its log too
        }
        modules.add(access);
        modules.add(loop -> new MessageCheck(meters));
        if (cache != null) {
            modules.add(cache);
        }
        if (limits.active()) {
            LimitMeters limitMeters = new LimitMeters(meters);
            Floods floods = Floods.watch(limits, meters);
            modules.add(loop -> new LimitStage(limits, limitMeters, backend, loop, top,
                    floods == null ? null : floods.watcher(limits, limitMeters)));
        }
        List<List<Stage>> stages = new ArrayList<>();
        List<UpstreamReplies> answers = new ArrayList<>();
        for (EventExecutor e : group) {
            List<Stage> loopStages = new ArrayList<>();
            modules.forEach(m -> loopStages.add(m.stage((EventLoop) e)));
            stages.add(loopStages);
            answers.add(Pipeline.answersOf(loopStages, errors));
        }
        forwarding = Forwarding.start(group, transport, settings, meters, answers, errors, dnstap);
        stops.push(forwarding::close);
        int i = 0;
        for (EventExecutor e : group) {
            ForwardStage last = forwarding.stage(i);
            List<Stage> loopStages = stages.get(i++);
            loopStages.add(last);
            pipelines.add(new Pipeline((EventLoop) e, last, loopStages, errors, clock::epochNanos));
        }
        limits.declareGauges(meters);
        metrics = new MetricsEndpoint(meters);
        stops.push(metrics::close);
        if (settings.metrics() != null) {
            try {
                metrics.serve(settings.metrics());
            } catch (IOException e) {
                throw Addresses.bindFailure(settings.metrics(), "http (metrics)", e);
            }
        }
        // What start-up made and keeps (the suffix list's trie, pools, tables) is moved to the
        // old generation now, before any query: else the first young collections under load
        // copy it, the longest pauses of a run (docs/benchmarks.md, "Soak").
        System.gc();
        frontend = Frontend.bind(settings, transport, group, pipelines, meters, clientRules, clock);
        reloader = new Reloader(settings, meters, limits, forwarding, clientRules, dnstap, frontend);
        stops.push(this::drainAndClose);
        if (!settings.tlsListen().isEmpty() || !settings.httpsListen().isEmpty()) {
            meters.gauge("tls_certificate_expiry_timestamp_seconds",
                    "When the certificate served over TLS and HTTPS expires, in seconds since the epoch; a reload reads it again.",
                    frontend::tlsExpiresAt);
        }
        limits.start();
        modules.forEach(Module::start);
        if (top != null) {
            top.start();
        }
        if (settings.admin() != null) {
            try {
                admin = AdminServer.start(settings.admin(), settings.adminTokenFile(), new Operations(new AdminView(reloader, limits, forwarding, cache, top, meters, metrics, frontend)));
            } catch (IOException e) {
                throw Addresses.bindFailure(settings.admin(), "http (admin)", e);
            }
            stops.push(admin::close);
        }
    }

    /** Every metric in the Prometheus text format, the JVM's included. */
    public String metricsText() {
        return metrics.text();
    }

    /** The bound listen addresses, ports resolved. */
    public List<InetSocketAddress> addresses() {
        return frontend.addresses();
    }

    /** The DNS-over-HTTPS addresses bound, ports resolved; empty without https-listen. */
    public List<InetSocketAddress> httpsAddresses() {
        return frontend.httpsAddresses();
    }

    /** The DNS-over-TLS addresses bound, ports resolved; empty without tls-listen. */
    public List<InetSocketAddress> tlsAddresses() {
        return frontend.tlsAddresses();
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
        return limits;
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
        String upstreams = settings.upstreams().stream().map(UpstreamAddress::toString).collect(Collectors.joining(", "));
        List<?> allowed = settings.allowClients();
        return frontend.describe()
                + "; upstreams " + upstreams + " (timeout " + settings.timeout().toMillis()
                + " ms, query-timeout " + settings.queryTimeout().toMillis() + " ms)"
                + "; threads " + settings.threads() + "; transport " + transport
                + "; clients " + (settings.aclIsDefault() ? "private networks"
                        : allowed.size() == 1 ? allowed.get(0).toString() : allowed.size() + " networks")
                + " (else " + settings.aclAction() + ")"
                + (settings.proxyProtocolFrom().isEmpty() ? "" : "; PROXY v2 from " + settings.proxyProtocolFrom().size()
                        + (settings.proxyProtocolFrom().size() == 1 ? " network" : " networks"))
                + "; " + (cache == null ? "cache off" : "cache " + cache.capacity() + " answers")
                + "; " + limits.describe()
                + (backend == null || backend.describe().isEmpty() ? "" : ", " + backend.describe())
                + (!limits.active() && settings.backend().kind() != BackendSettings.Kind.MEMORY
                        ? " (backend " + settings.backend().kind() + " unused: nothing is limited)" : "")
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
        if (!closing.compareAndSet(false, true)) {
            try {
                closed.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        try {
            stop();
        } finally {
            closed.countDown();
        }
    }

    private void stop() {
        while (!stops.isEmpty()) {
            try {
                stops.pop().run();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) { // the other parts are stopped all the same
                log.warn("while stopping: {}", e.toString(), e);
            }
        }
    }

    /**
     * Stops taking queries, lets those in flight and parked finish, and the TCP connections answer
     * what they have read, for up to the query timeout; then closes the listeners.
     */
    private void drainAndClose() {
        frontend.stopReading();
        long deadline = System.nanoTime() + reloader.settings().queryTimeout().toNanos();
        // A query a TCP connection holds back (its client reads its answers slowly) is in no
        // forwarder yet: the connection's close, once it has answered, says it is done.
        while ((inFlight() > 0 || frontend.openTcpConnections() > 0) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(DRAIN_POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        frontend.close();
    }

    /** Queries in flight or parked now, the retiring generations' included. */
    private int inFlight() {
        int n = forwarding.inFlight();
        for (Pipeline p : pipelines) {
            n += OnLoop.count(p.loop(), p::parked);
        }
        return n;
    }
}
