package io.sluice;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.sluice.backend.Backends;
import io.sluice.config.BackendSettings;
import io.sluice.config.ConfigException;
import io.sluice.config.Reloadable;
import io.sluice.config.Setting;
import io.sluice.config.Settings;
import io.sluice.flood.Floods;
import io.sluice.limit.Backend;
import io.sluice.limit.Clock;
import io.sluice.limit.LimitMeters;
import io.sluice.limit.LimitStage;
import io.sluice.limit.Limits;
import io.sluice.metrics.Registry;
import io.sluice.pipeline.InternalErrors;
import io.sluice.pipeline.Module;
import io.sluice.pipeline.Stage;
import io.sluice.pipeline.UpstreamGate;
import io.sluice.top.TopDomains;

/**
 * The limits as a module: the per-domain and per-client limiters ({@code limit}), the backend
 * their counters live in ({@code backend}), flood detection ({@code flood}) and the busiest domains
 * ({@code top}), joined in each loop's limit stage. It is made in the root package because that is
 * the one package that sees all four without a cycle: the backends and flood detection build on
 * the limiter.
 */
final class LimitsModule implements Module, Reloadable {
    /** Domains in the top-K gauges of /metrics. */
    private static final int TOP_GAUGES = 20;

    private final Limits limits;
    /** What runs beside the counters (Redis), or null when nothing is limited. */
    private final Backend backend;
    /** The busiest domains, worked out while the admin API is on and something is limited; else null. */
    private final TopDomains top;
    /** Null when detection is off or nothing is limited. */
    private final Floods floods;
    private final LimitMeters meters;
    private final BackendSettings.Kind configured;

    private LimitsModule(Limits limits, Backend backend, TopDomains top, Floods floods, LimitMeters meters,
                         BackendSettings.Kind configured) {
        this.limits = limits;
        this.backend = backend;
        this.top = top;
        this.floods = floods;
        this.meters = meters;
        this.configured = configured;
    }

    /**
     * Loads the suffix list, opens the counters' store and starts their backend.
     *
     * @param loops the event loops, which a backend's client may share when they are epoll's; else null
     * @throws ConfigException when the limits cannot be used (suffix list, overrides, store)
     */
    static LimitsModule start(Settings settings, Clock clock, Registry meters, EventLoopGroup loops,
                              InternalErrors errors) throws ConfigException {
        // Budgets can change while running (a reload, the admin API): the limits are kept ready
        // even when nothing is limited yet.
        Limits limits = Limits.from(settings.limits(), clock, policies -> Backends.counters(settings, policies),
                settings.admin() != null || settings.configFile() != null);
        limits.declareGauges(meters);
        if (!limits.active()) {
            return new LimitsModule(limits, null, null, null, null, settings.backend().kind());
        }
        Backend backend = null;
        try {
            backend = Backends.start(settings, limits.limiter(), meters, loops, errors);
            TopDomains top = null;
            if (settings.admin() != null) {
                top = new TopDomains();
                limits.limiter().trackUnlimited(); // so that the busiest domains include unlimited ones
                top.declareGauges(meters, TOP_GAUGES);
            }
            return new LimitsModule(limits, backend, top, Floods.watch(limits, meters), new LimitMeters(meters),
                    settings.backend().kind());
        } catch (RuntimeException e) {
            if (backend != null) {
                backend.close();
            }
            limits.close();
            throw e;
        }
    }

    /** The limit stage of {@code loop}; null while nothing is limited. */
    @Override
    public Stage stage(EventLoop loop) {
        return limits.active() ? new LimitStage(limits, meters, backend, loop, top,
                floods == null ? null : floods.watcher(limits, meters)) : null;
    }

    /** The janitors and the busiest domains' drain. */
    @Override
    public void start() {
        limits.start();
        if (top != null) {
            top.start();
        }
    }

    Limits limits() {
        return limits;
    }

    /** What bounds each domain's queries waiting on upstreams: the forwarders ask it before they send one. */
    UpstreamGate gate() {
        return limits.waiting();
    }

    /** The busiest domains, or null when nobody asks (no admin API) or nothing is limited. */
    TopDomains top() {
        return top;
    }

    /** For the startup line. */
    String describe() {
        return limits.describe()
                + (backend == null || backend.describe().isEmpty() ? "" : ", " + backend.describe())
                + (!limits.active() && configured != BackendSettings.Kind.MEMORY
                        ? " (backend " + configured + " unused: nothing is limited)" : "");
    }

    /** Stops the backend (Redis's connection may be on a loop: before the loops stop), the drain, the janitors and the store. */
    @Override
    public void close() {
        if (backend != null) {
            backend.close();
        }
        if (top != null) {
            top.close();
        }
        limits.close();
    }

    /** A reload's limits: one new snapshot of budgets, flood settings, action, dry run and exemptions. */
    @Override
    public Setting.Applied part() {
        return Setting.Applied.LIMITS;
    }

    @Override
    public void check(Settings next) throws ConfigException {
        limits.check(next.limits());
    }

    @Override
    public void apply(Settings next) throws ConfigException {
        limits.reload(next.limits()); // checked: it takes them
    }
}
