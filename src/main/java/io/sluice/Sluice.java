package io.sluice;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.prometheus.metrics.model.snapshots.Labels;
import io.sluice.acl.AccessControl;
import io.sluice.acl.ClientRules;
import io.sluice.acl.DeniedLog;
import io.sluice.admin.AdminServer;
import io.sluice.admin.Operations;
import io.sluice.admin.RunningServer;
import io.sluice.backend.Backends;
import io.sluice.cache.AnswerCache;
import io.sluice.cache.CacheStage;
import io.sluice.config.BackendSettings;
import io.sluice.config.ConfigException;
import io.sluice.config.LimitSettings;
import io.sluice.config.SettingTable;
import io.sluice.config.Settings;
import io.sluice.config.UpstreamAddress;
import io.sluice.dnstap.Dnstap;
import io.sluice.domain.RegistrableDomains;
import io.sluice.forward.ForwardStage;
import io.sluice.forward.Forwarder;
import io.sluice.forward.Forwarders;
import io.sluice.forward.Upstream;
import io.sluice.frontend.Frontend;
import io.sluice.limit.Backend;
import io.sluice.limit.Budgets;
import io.sluice.limit.Clock;
import io.sluice.limit.Decisions;
import io.sluice.limit.FloodWatch;
import io.sluice.limit.LimitMeters;
import io.sluice.limit.LimitStage;
import io.sluice.limit.Limits;
import io.sluice.limit.TopDomains;
import io.sluice.metrics.LatencyHistogram;
import io.sluice.metrics.MetricsEndpoint;
import io.sluice.metrics.Registry;
import io.sluice.pipeline.GuardedReplies;
import io.sluice.pipeline.InternalErrors;
import io.sluice.pipeline.MessageCheck;
import io.sluice.pipeline.Pipeline;
import io.sluice.pipeline.Stage;
import io.sluice.pipeline.UpstreamReplies;
import io.sluice.transport.Addresses;
import io.sluice.transport.ServerTls;
import io.sluice.transport.Transport;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;
import javax.net.ssl.SSLException;

/** A running forwarder: its event loops, upstreams and listeners, started and stopped as one. */
public final class Sluice implements AutoCloseable, RunningServer {
    private static final long DRAIN_POLL_MILLIS = 10;
    /** How long past query-timeout a replaced forwarding generation stays open: its ticks may notice an expiry late. */
    private static final long RETIRE_MARGIN_MILLIS = 1000;
    /** Domains in the top-K gauges of /metrics. */
    private static final int TOP_GAUGES = 20;

    /** As started, with what reloads changed since. */
    private volatile Settings settings;
    /** allow-clients and acl-action as the loops and the TCP listener read them; a reload replaces them. */
    private final ClientRules clientRules;
    /** Bugs caught on the loops ({@code internal_errors}); a new forwarding generation reports there too. */
    private final InternalErrors internalErrors;
    private final Transport transport;
    private final EventLoopGroup group;
    /** The forwarding generation in force; a reload of the upstreams replaces it. */
    private volatile Forwarders forwarding;
    /**
     * Generations replaced by a reload, still answering their queries in flight until closed.
     * Touched by reloads, the retiring thread and close; never under this object's lock from a
     * loop, since a reload holds that lock while it waits on the loops.
     */
    private final List<Forwarders> retiring = new CopyOnWriteArrayList<>();
    /** {@link #close} has begun: a second call waits for the first to end, and does nothing more. */
    private final AtomicBoolean closing = new AtomicBoolean();
    private final CountDownLatch closed = new CountDownLatch(1);
    /** Closes replaced generations once their queries are done; off the loops. */
    private final ScheduledExecutorService retirer = Executors.newSingleThreadScheduledExecutor(
            new ThreadFactoryBuilder().setNameFormat("sluice-retire").setDaemon(true).build());
    /** Each loop's last stage, which a new generation is handed to. */
    private final List<ForwardStage> forwardStages;
    /** What sees each loop's upstream answers, in the group's order: every forwarding generation hands them there. */
    private final List<UpstreamReplies> upstreamReplies;
    /** The answer cache, or null when it is off. */
    private final AnswerCache cache;
    private final List<Pipeline> pipelines;
    private final Frontend frontend;
    private final Registry meters;
    private final Limits limits;
    /** The metrics, served on --metrics when asked for. */
    private final MetricsEndpoint metrics;
    /** What runs beside the limiter's counters (Redis), or null when nothing is limited. */
    private final Backend backend;
    private final DeniedLog deniedLog;
    /** dnstap, or null when it is off. */
    private final Dnstap dnstap;
    /** The busiest domains, worked out while the admin API is on; else null. */
    private final TopDomains top;
    /** The admin API, or null. */
    private AdminServer admin;
    private final LongAdder reloads;
    private final LongAdder reloadFailures;
    /**
     * Reads the settings again for a reload: the file, then the same flags. Set after start, read
     * by the admin and signal threads: volatile.
     */
    private volatile SettingsSource reloadSource = () -> {
        throw new ConfigException("nothing to reload: sluice was started without --config");
    };

    /** Where a reload reads its settings. */
    @FunctionalInterface
    public interface SettingsSource {
        Settings read() throws ConfigException;
    }

    private Sluice(Settings settings, Transport transport, EventLoopGroup group, Forwarders forwarding,
                   List<ForwardStage> forwardStages, AnswerCache cache, List<UpstreamReplies> upstreamReplies,
                   List<Pipeline> pipelines, Frontend frontend, Registry meters, Limits limits, MetricsEndpoint metrics,
                   Backend backend, DeniedLog deniedLog, TopDomains top, ClientRules clientRules,
                   InternalErrors internalErrors, Dnstap dnstap) {
        this.dnstap = dnstap;
        this.settings = settings;
        this.clientRules = clientRules;
        this.internalErrors = internalErrors;
        this.cache = cache;
        this.upstreamReplies = upstreamReplies;
        this.transport = transport;
        this.group = group;
        this.forwarding = forwarding;
        this.forwardStages = forwardStages;
        this.pipelines = pipelines;
        this.frontend = frontend;
        this.meters = meters;
        this.limits = limits;
        this.metrics = metrics;
        this.backend = backend;
        this.deniedLog = deniedLog;
        this.top = top;
        this.reloads = meters.counter("reloads", "Reloads of the configuration that were put in force.");
        this.reloadFailures = meters.counter("reload_failures", "Reloads refused: the file was invalid; nothing changed.");
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
        Limits limits = Limits.from(settings.limits(), clock, policies -> Backends.counters(settings, policies),
                settings.admin() != null || settings.configFile() != null);
        Transport transport = Transport.best();
        Registry meters = new Registry();
        EventLoopGroup group = transport.newGroup(settings.threads(), "sluice-loop");
        Forwarders forwarding = null;
        MetricsEndpoint metrics = null;
        Backend backend = null;
        DeniedLog deniedLog = null;
        TopDomains top = null;
        Dnstap dnstap = null;
        Sluice started = null;
        try {
            if (settings.dnstap().on()) {
                dnstap = Dnstap.start(settings.dnstap(), "sluice " + Main.Version.get(), clock::epochNanos, meters);
            }
            AnswerCache cache = settings.cache().on() ? new AnswerCache(settings.cache(), settings.threads(), clock::epochNanos,
                    settings.maxUdpSize(), meters) : null;
            LimitMeters limitMeters = new LimitMeters(meters);
            List<CacheStage> cacheStages = new ArrayList<>();
            List<UpstreamReplies> upstreamReplies = new ArrayList<>();
            InternalErrors internalErrors = new InternalErrors(meters.counter("internal_errors",
                    "Exceptions caught on the query path (a stage, or what sees the upstreams' answers): a bug, logged with its stack at most once a minute; the query is dropped, or goes on without what failed."));
            for (int i = 0; i < settings.threads(); i++) {
                CacheStage stage = cache == null ? null : cache.stage();
                List<UpstreamReplies> each = new ArrayList<>();
                if (stage != null) {
                    each.add(GuardedReplies.of(stage, internalErrors));
                }
                if (limits.active() && limits.limiter().floods() != null) {
                    each.add(GuardedReplies.of(new FloodWatch(limits, limitMeters), internalErrors));
                }
                cacheStages.add(stage);
                upstreamReplies.add(UpstreamReplies.of(each));
            }
            forwarding = Forwarders.start(group, transport, settings, meters, upstreamReplies, internalErrors, dnstap);
            if (limits.active()) {
                backend = Backends.start(settings, limits.limiter(), meters, transport == Transport.EPOLL ? group : null,
                        internalErrors);
            }
            LongAdder aclDenied = meters.counter("acl_denied",
                    "Queries (and TCP connections) from clients outside allow-clients.");
            ClientRules allowed = new ClientRules(settings.allowClients(),
                    settings.aclAction() == SettingTable.AclAction.DROP, settings.proxyProtocolFrom());
            deniedLog = new DeniedLog(aclDenied);
            if (settings.admin() != null && limits.active()) {
                top = new TopDomains();
                limits.limiter().trackUnlimited(); // so that the busiest domains include unlimited ones
            }
            List<Pipeline> pipelines = new ArrayList<>();
            List<ForwardStage> forwardStages = new ArrayList<>();
            for (int i = 0; i < forwarding.perLoop().size(); i++) {
                Forwarder f = forwarding.perLoop().get(i);
                ForwardStage last = new ForwardStage(f);
                forwardStages.add(last);
                pipelines.add(pipeline(settings, f.loop(), last, limits, backend, limitMeters, meters, allowed,
                        aclDenied, deniedLog, top, cacheStages.get(i), internalErrors, clock, dnstap));
            }
            metrics = startMetrics(settings, meters, limits, forwarding, top);
            // What start-up made and keeps (the suffix list's trie, pools, tables) is moved to the
            // old generation now, before any query: else the first young collections under load
            // copy it, the longest pauses of a run (docs/benchmarks.md, "Soak").
            System.gc();
            Frontend frontend = Frontend.bind(settings, transport, group, pipelines, meters, allowed, clock);
            if (!settings.tlsListen().isEmpty() || !settings.httpsListen().isEmpty()) {
                meters.gauge("tls_certificate_expiry_timestamp_seconds",
                        "When the certificate served over TLS and HTTPS expires, in seconds since the epoch; a reload reads it again.",
                        frontend::tlsExpiresAt);
            }
            limits.start();
            deniedLog.start();
            if (top != null) {
                top.start();
            }
            started = new Sluice(settings, transport, group, forwarding, forwardStages, cache, upstreamReplies, pipelines,
                    frontend, meters, limits, metrics, backend, deniedLog, top, allowed, internalErrors, dnstap);
            if (settings.admin() != null) {
                started.admin = startAdmin(settings, started);
            }
            return started;
        } catch (BindException | InterruptedException | RuntimeException | ConfigException e) {
            if (started != null) {
                started.close();
                throw e;
            }
            if (top != null) {
                top.close();
            }
            if (metrics != null) {
                metrics.close();
            }
            if (forwarding != null) {
                forwarding.close();
            }
            if (backend != null) {
                backend.close(); // before the loops stop: Redis's connection may be on one
            }
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
            if (deniedLog != null) {
                deniedLog.close();
            }
            if (dnstap != null) {
                dnstap.close();
            }
            limits.close();
            throw e;
        }
    }

    /**
     * The query path of one event loop, in order. A new stage is one class and one line here.
     *
     * @param decisions how the limit stage decides, or null when nothing is limited
     * @param cache     the loop's side of the answer cache, or null without one
     * @param dnstap    dnstap, or null when it is off
     */
    private static Pipeline pipeline(Settings settings, EventLoop loop, ForwardStage last, Limits limits,
                                     Decisions.Maker decisions, LimitMeters limitMeters, Registry meters,
                                     ClientRules allowed, LongAdder aclDenied, DeniedLog deniedLog,
                                     TopDomains top, CacheStage cache, InternalErrors errors, Clock clock,
                                     Dnstap dnstap) {
        List<Stage> stages = new ArrayList<>();
        if (dnstap != null) {
            stages.add(dnstap.clientQueries());
        }
        stages.add(new AccessControl(allowed, aclDenied, deniedLog));
        stages.add(new MessageCheck(meters));
        if (cache != null) {
            stages.add(cache);
        }
        if (decisions != null) {
            stages.add(new LimitStage(limits, limitMeters, decisions, loop, top,
                    cache == null ? null : cache.staleAnswers()));
        }
        stages.add(last);
        return new Pipeline(loop, last, stages, errors, clock::epochNanos);
    }

    private static AdminServer startAdmin(Settings settings, Sluice sluice) throws BindException, ConfigException {
        try {
            return AdminServer.start(settings.admin(), settings.adminTokenFile(), new Operations(sluice));
        } catch (IOException e) {
            BindException b = new BindException(Addresses.text(settings.admin()) + "/http (admin): " + e.getMessage());
            b.initCause(e);
            throw b;
        }
    }

    /** The metrics: gauges declared, and served on --metrics when asked for. */
    private static MetricsEndpoint startMetrics(Settings settings, Registry meters, Limits limits, Forwarders forwarding,
                                                TopDomains top) throws BindException {
        meters.gauge("tracked_domains", "Registrable domains with a counter now.", limits::tracked);
        if (limits.active() && limits.limiter().floods() != null) {
            meters.gauge("flooded_domains", "Domains whose budget is cut now: their upstream answers are mostly NXDOMAIN.",
                    () -> limits.limiter().floodedDomains());
        }
        upstreamGauges(meters, forwarding);
        if (top != null) {
            meters.gauges("top_domain_queries", "Queries of the " + TOP_GAUGES + " busiest domains (label domain) over about the last "
                    + TopDomains.SECONDS + " seconds.", () -> topGauges(top, false));
            meters.gauges("top_domain_refused", "Refusals of the " + TOP_GAUGES + " most refused domains (label domain) over about the"
                    + " last " + TopDomains.SECONDS + " seconds.", () -> topGauges(top, true));
        }
        if (limits.active() && limits.limiter().store().size() >= 0) {
            meters.gauge("state_file_domains", "Entries in the state file.", () -> limits.limiter().store().size());
            meters.counter("state_file_failures", "Decisions the state file could not take, and allowed.",
                    () -> limits.limiter().store().failures());
        }
        MetricsEndpoint endpoint = new MetricsEndpoint(meters);
        if (settings.metrics() == null) {
            return endpoint;
        }
        try {
            endpoint.serve(settings.metrics());
            return endpoint;
        } catch (IOException e) {
            BindException b = new BindException(Addresses.text(settings.metrics()) + "/http (metrics): "
                    + e.getMessage());
            b.initCause(e);
            throw b;
        }
    }

    /** {@code upstream_up} for each upstream of {@code forwarding}, and no other. */
    private static void upstreamGauges(Registry meters, Forwarders forwarding) {
        meters.removeGauges("upstream_up");
        for (Upstream u : forwarding.upstreams()) {
            meters.gauge("upstream_up", "1 while an upstream is up, 0 while marked down.", () -> u.isDown() ? 0 : 1,
                    "upstream", u.toString());
        }
    }

    /** Top-K gauges: at most {@link #TOP_GAUGES} domain labels, so that the series stay few. */
    private static Map<Labels, Long> topGauges(TopDomains top, boolean byRefused) {
        Map<Labels, Long> out = new LinkedHashMap<>();
        for (TopDomains.Entry e : top.top(TOP_GAUGES, byRefused)) {
            out.put(Labels.of("domain", e.domain()), byRefused ? e.refused() : e.queries());
        }
        return out;
    }

    /** Every metric in the Prometheus text format, the JVM's included. */
    @Override
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

    /** The answer cache, or null when it is off. */
    @Override
    public AnswerCache cache() {
        return cache;
    }

    public Limits limits() {
        return limits;
    }

    @Override
    public Map<String, Long> counters() {
        return meters.counters();
    }

    @Override
    public int trackedDomains() {
        return limits.tracked();
    }

    @Override
    public LimitSettings.Algorithm algorithm() {
        return limits.settings().algorithm();
    }

    @Override
    public Budgets budgets() {
        return limits.budgets();
    }

    @Override
    public RegistrableDomains domains() {
        return limits.domains();
    }

    @Override
    public boolean flooded(String domain) {
        return limits.active() && limits.limiter().flooded(domain);
    }

    /** Where the admin API is served, or null. */
    public InetSocketAddress adminAddress() {
        return admin == null ? null : admin.address();
    }

    /** The busiest domains while the admin API is on; else null. */
    @Override
    public TopDomains top() {
        return top;
    }

    @Override
    public List<Upstream> upstreams() {
        return forwarding.upstreams();
    }

    /** The latency of the replies of the {@code index}-th upstream. */
    @Override
    public LatencyHistogram upstreamLatency(int index) {
        return forwarding.latency(index);
    }

    /** Null while serving with an upstream up; else what is missing, for /readyz. */
    @Override
    public String notReady() {
        if (frontend.addresses().isEmpty()) {
            return "not listening";
        }
        return forwarding.upstreams().stream().allMatch(Upstream::isDown) ? "every upstream is down" : null;
    }

    /** Where {@link #reload} reads from; until set, a reload says there is nothing to reload. */
    public void reloadFrom(SettingsSource source) {
        this.reloadSource = source;
    }

    /**
     * Reads the configuration again and puts in force what can change while running: limits,
     * overrides, exemptions, action, dry run, the client rules, and the upstreams with their
     * timeouts and health checks. What needs a restart is kept as it is and named in the result. One reload at a time.
     *
     * @return one line per change
     * @throws ConfigException when the file is invalid (naming file, line and key); nothing changes then
     */
    @Override
    public synchronized List<String> reload() throws ConfigException {
        Settings next;
        try {
            next = reloadSource.read();
        } catch (ConfigException e) {
            reloadFailures.increment();
            throw e;
        }
        Reload r = Reload.between(settings, next);
        ServerTls.Contexts tls = null;
        if (!settings.tlsListen().isEmpty() || !settings.httpsListen().isEmpty()) {
            // certificates are renewed in place: read again at every reload
            try {
                tls = ServerTls.Contexts.load(settings.tlsCertFile(), settings.tlsKeyFile());
            } catch (SSLException e) {
                reloadFailures.increment();
                throw new ConfigException("tls-cert-file, tls-key-file: " + ServerTls.whatIsWrong(e));
            }
        }
        try {
            if (!r.limitChanges().isEmpty()) {
                limits.check(r.applied().limits()); // before anything changes
            }
            if (!r.forwardChanges().isEmpty()) {
                switchForwarding(r.applied());
            }
            if (!r.limitChanges().isEmpty()) {
                limits.reload(r.applied().limits()); // checked above: it takes them
            }
            if (!r.aclChanges().isEmpty()) {
                clientRules.replace(next.allowClients(), next.aclAction() == SettingTable.AclAction.DROP,
                        next.proxyProtocolFrom());
            }
        } catch (ConfigException e) {
            reloadFailures.increment();
            throw e;
        } catch (InterruptedException | RuntimeException e) {
            reloadFailures.increment();
            throw new ConfigException("upstreams: cannot use them: " + e.getMessage());
        }
        LogLevel.apply(next.logLevel());
        if (!r.dnstapChanges().isEmpty()) {
            dnstap.reconfigure(r.applied().dnstap());
        }
        if (tls != null) {
            frontend.useTls(tls);
        }
        settings = r.applied();
        reloads.increment();
        List<String> all = new ArrayList<>(r.limitChanges());
        all.addAll(r.aclChanges());
        all.addAll(r.forwardChanges());
        all.addAll(r.dnstapChanges());
        r.needRestart().forEach(k -> all.add(k + ": needs a restart, kept as it was"));
        if (tls != null) {
            all.add("tls-cert-file: read again, for new TLS connections");
        }
        return all;
    }

    /**
     * Puts a new forwarding generation in force: made and connected first (a failure changes
     * nothing), then handed to every loop's last stage, each on its own loop. The old one answers
     * the queries it has in flight, which query-timeout bounds, and is closed after that.
     */
    private void switchForwarding(Settings applied) throws InterruptedException {
        Forwarders next = Forwarders.start(group, transport, applied, meters, upstreamReplies, internalErrors, dnstap);
        Forwarders old = forwarding;
        for (int i = 0; i < forwardStages.size(); i++) {
            ForwardStage stage = forwardStages.get(i);
            Forwarder f = next.perLoop().get(i);
            f.loop().execute(() -> stage.switchTo(f));
        }
        forwarding = next;
        upstreamGauges(meters, next);
        retiring.add(old);
        long drainMillis = settings.queryTimeout().toMillis() + RETIRE_MARGIN_MILLIS;
        retirer.schedule(() -> retire(old), drainMillis, TimeUnit.MILLISECONDS);
    }

    private void retire(Forwarders old) {
        if (retiring.remove(old)) {
            old.close();
            synchronized (this) { // not while a reload makes a generation, which may ask for these series again
                Set<String> asked = new HashSet<>();
                forwarding.upstreams().forEach(u -> asked.add(u.toString()));
                retiring.forEach(r -> r.upstreams().forEach(u -> asked.add(u.toString())));
                for (Upstream u : old.upstreams()) {
                    if (!asked.contains(u.toString())) {
                        meters.removeSeries("upstream", u.toString()); // a reload removed it: no series lingers
                    }
                }
            }
        }
    }

    /** Where --metrics serves /metrics, or null. */
    public InetSocketAddress metricsAddress() {
        return metrics.address();
    }

    /** The startup line: what listens where, for which upstreams, on which transport. */
    public String describe() {
        String listen = frontend.addresses().stream().map(Addresses::text).collect(Collectors.joining(", "));
        String upstreams = settings.upstreams().stream().map(UpstreamAddress::toString).collect(Collectors.joining(", "));
        return "listening on " + listen + " (udp x" + frontend.udpSocketsPerAddress() + ", tcp)"
                + (frontend.tlsAddresses().isEmpty() ? "" : ", " + frontend.tlsAddresses().stream().map(Addresses::text)
                        .collect(Collectors.joining(", ")) + " (tls, " + ServerTls.provider() + ")")
                + (frontend.httpsAddresses().isEmpty() ? "" : ", " + frontend.httpsAddresses().stream()
                        .map(Addresses::text).collect(Collectors.joining(", ")) + " (https, " + ServerTls.provider() + ")")
                + "; upstreams " + upstreams + " (timeout " + settings.timeout().toMillis()
                + " ms, query-timeout " + settings.queryTimeout().toMillis() + " ms)"
                + "; threads " + settings.threads() + "; transport " + transport
                + "; clients " + (settings.aclIsDefault() ? "private networks" : settings.allowClients().size() == 1
                        ? settings.allowClients().get(0).toString() : settings.allowClients().size() + " networks")
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
                + (frontend.udpSocketsPerAddress() < 2 ? "" : "; udp steering " + steering());
    }

    /**
     * A warning for the start, or null: listen addresses other than loopback while allow-clients
     * is the default, which turns away every client there but private ones (a LAN whose clients
     * have global IPv6 addresses included).
     */
    public String exposureWarning() {
        if (!settings.aclIsDefault()) {
            return null;
        }
        List<String> exposed = new ArrayList<>();
        for (InetSocketAddress a : frontend.addresses()) {
            if (!a.getAddress().isLoopbackAddress()) {
                exposed.add(Addresses.text(a));
            }
        }
        String others = settings.aclAction() == SettingTable.AclAction.DROP ? "dropped" : "refused";
        return exposed.isEmpty() ? null : "listening on " + String.join(", ", exposed) + " with the default"
                + " allow-clients: only " + SettingTable.ALLOW_CLIENTS.defaultText() + " clients are answered,"
                + " any other (a public IPv4 or IPv6 address) is " + others
                + "; set allow-clients to say who may use this forwarder";
    }

    /** Which addresses share their datagrams out by CPU, and which by hash. */
    private String steering() {
        List<InetSocketAddress> byCpu = frontend.steeredByCpu();
        if (byCpu.isEmpty()) {
            return "hash";
        }
        if (byCpu.size() == frontend.addresses().size()) {
            return "cpu";
        }
        return "cpu on " + byCpu.stream().map(Addresses::text).collect(Collectors.joining(", ")) + ", hash elsewhere";
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
        if (admin != null) {
            admin.close();
        }
        if (top != null) {
            top.close();
        }
        if (metrics != null) {
            metrics.close();
        }
        frontend.stopReading();
        long deadline = System.nanoTime() + settings.queryTimeout().toNanos();
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
        synchronized (this) { // no reload from now on
            retirer.shutdownNow();
            forwarding.close();
            for (Forwarders r : retiring) {
                retire(r);
            }
        }
        if (backend != null) {
            backend.close(); // before the loops stop: Redis's connection may be on one
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        if (dnstap != null) { // after the loops: it writes out what they queued
            try {
                dnstap.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        deniedLog.close();
        limits.close();
    }

    /** Queries in flight or parked now, the retiring generations' included. */
    private int inFlight() {
        List<Forwarder> all = new ArrayList<>(forwarding.perLoop());
        retiring.forEach(r -> all.addAll(r.perLoop()));
        int n = 0;
        for (Pipeline p : pipelines) {
            n += onLoop(p.loop(), p::parked);
        }
        for (Forwarder f : all) {
            n += onLoop(f.loop(), f::inFlight);
        }
        return n;
    }

    private static int onLoop(EventLoop loop, java.util.function.IntSupplier count) {
        try {
            return loop.submit(count::getAsInt).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        } catch (ExecutionException e) {
            return 0;
        }
    }
}
