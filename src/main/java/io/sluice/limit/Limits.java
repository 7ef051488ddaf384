package io.sluice.limit;

import io.sluice.config.ConfigException;
import io.sluice.config.LimitSettings;
import io.sluice.domain.DomainKey;
import io.sluice.domain.RegistrableDomains;
import io.sluice.metrics.Registry;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * Everything the query handler needs to limit: the suffix list, the limiter, exempt clients, the
 * action and dry-run. {@link #active()} is false when no domain has a limit; then none of it runs.
 */
public final class Limits implements AutoCloseable {
    /**
     * The file's settings as last put in force, for reports and the next reload's comparison; a
     * query reads the rules they gave from the limiter ({@link LimitRules}), published in one write.
     */
    private volatile LimitSettings settings;
    private final RegistrableDomains domains;
    private final DomainLimiter limiter;
    private final Budgets budgets;
    private final Janitor janitor;
    /** Budgets per client network and domain (always in memory), or null when off. */
    private final DomainLimiter perClient;
    private final Janitor perClientJanitor;
    /** Each domain's queries waiting on upstreams, and their bound; there with the limits or without. */
    private final WaitingPerDomain waiting;

    private Limits(LimitSettings settings, RegistrableDomains domains, DomainLimiter limiter, Budgets budgets,
                   DomainLimiter perClient) {
        this.settings = settings;
        this.domains = domains;
        this.limiter = limiter;
        this.budgets = budgets;
        this.janitor = limiter == null ? null : new Janitor(limiter, budgets, this::dryRun, settings.maxDomains());
        this.perClient = perClient;
        this.perClientJanitor = perClient == null ? null
                : new Janitor(perClient, null, this::dryRun, settings.maxDomains());
        this.waiting = new WaitingPerDomain(settings.maxInflightPerDomain());
    }

    /** {@link #from(LimitSettings, Clock, StoreOpener, boolean)} with the counters in memory. */
    public static Limits from(LimitSettings s, Clock clock) throws ConfigException {
        return from(s, clock, policies -> new HeapCounters(), false);
    }

    /** Where the words live: opened once the policies are known, only when limits are on. */
    @FunctionalInterface
    public interface StoreOpener {
        CounterStore open(Function<DomainKey, Policy> policies) throws ConfigException;
    }

    /**
     * Loads the suffix list, checks the overrides against it and opens the counter store.
     *
     * @param changeable whether budgets may be set while running (a reload, the admin API): then the
     *                   limits run even when nothing is limited yet
     * @throws ConfigException when the list file cannot be used, an override is not a registrable
     *                         domain, or the store cannot be opened
     */
    public static Limits from(LimitSettings s, Clock clock, StoreOpener stores, boolean changeable)
            throws ConfigException {
        if (s.off() && !changeable) {
            return new Limits(s, null, null, null, null);
        }
        RegistrableDomains domains = domains(s);
        checkOverrides(s, domains);
        DomainLimiter[] made = new DomainLimiter[1]; // the store asks for policies only once traffic runs
        CounterStore store = stores.open(key -> made[0].policies().of(key));
        Map<DomainKey, Policy> overrides = new HashMap<>();
        s.domains().forEach((d, l) -> overrides.put(DomainKey.of(d), Budgets.policy(l, s.burst())));
        DomainLimiter limiter = new DomainLimiter(Algorithm.of(s.algorithm()), store,
                LimitRules.of(new PolicyTable(Budgets.policy(s.defaultLimit(), s.burst()), overrides), s),
                s.maxDomains(), clock);
        made[0] = limiter;
        DomainLimiter perClient = s.perClient().off() ? null : new DomainLimiter(Algorithm.of(s.algorithm()),
                new HeapCounters(), LimitRules.of(new PolicyTable(Budgets.policy(s.perClient().limit(), 0), Map.of())),
                s.maxDomains(), clock);
        return new Limits(s, domains, limiter,
                new Budgets(limiter, domains, clock, s.defaultLimit(), s.domains(), s.burst()), perClient);
    }

    /**
     * What a start would refuse in {@code s} beyond the file's own checks: the suffix list it
     * names, and an override that is not a registrable domain under it ({@code --check-config}).
     */
    public static void checkAtStart(LimitSettings s) throws ConfigException {
        checkOverrides(s, domains(s));
    }

    private static RegistrableDomains domains(LimitSettings s) throws ConfigException {
        try {
            return (s.publicSuffixList() == null ? RegistrableDomains.fromGuava()
                    : RegistrableDomains.fromFile(s.publicSuffixList()))
                    .withReversePrefixes(s.reverseIpv4Prefix(), s.reverseIpv6Prefix());
        } catch (IOException e) {
            throw new ConfigException("public-suffix-list: " + s.publicSuffixList() + ": " + e.getMessage());
        }
    }

    private static void checkOverrides(LimitSettings s, RegistrableDomains domains) throws ConfigException {
        for (String name : s.domains().keySet()) {
            try {
                Budgets.registrable(domains, name);
            } catch (IllegalArgumentException e) {
                throw new ConfigException(s.origin(name) + ": " + e.getMessage());
            }
        }
    }

    public void start() {
        if (janitor != null) {
            janitor.start(settings.janitorInterval());
        }
        if (perClientJanitor != null) {
            perClientJanitor.start(settings.janitorInterval());
        }
    }

    public boolean active() {
        return limiter != null;
    }

    public RegistrableDomains domains() {
        return domains;
    }

    public DomainLimiter limiter() {
        return limiter;
    }

    /** The budgets per client network and domain, or null when off. */
    public DomainLimiter perClient() {
        return perClient;
    }

    /** The per-client settings (prefixes), as started. */
    public LimitSettings.PerClient perClientSettings() {
        return settings.perClient();
    }

    /** The budgets, to change them while running; null when limits are off. */
    public Budgets budgets() {
        return budgets;
    }

    /**
     * Puts a reloaded file's limits in force, all in one write ({@link LimitRules}): the default,
     * the overrides, the flood settings, the action, dry run and exemptions. Runtime budgets stay;
     * counters of unchanged budgets carry on. What cannot change while running (algorithm, table
     * bound, suffix list, janitor interval, flood detection on or off) must be as before: the caller
     * checks.
     *
     * @throws ConfigException when an override is not a registrable domain; nothing changes then
     */
    public void reload(LimitSettings next) throws ConfigException {
        check(next);
        budgets.reload(next);
        waiting.bound(next.maxInflightPerDomain());
        settings = next;
    }

    /** Each domain's queries waiting on upstreams and their bound: the forwarders' gate. */
    public WaitingPerDomain waiting() {
        return waiting;
    }

    /** Whether {@link #reload} would take {@code next}; nothing changes either way. */
    public void check(LimitSettings next) throws ConfigException {
        if (budgets == null) {
            throw new ConfigException("limits cannot change while running (start sluice with --config or --admin)");
        }
        checkOverrides(next, domains);
    }

    public LimitSettings settings() {
        return settings;
    }

    public boolean dryRun() {
        return limiter == null ? settings.dryRun() : limiter.rules().dryRun();
    }

    /** Domains with a counter now; 0 when limits are off. */
    public int tracked() {
        return limiter == null ? 0 : limiter.tracked();
    }

    /** Whether budgets may change while running (reload, admin API). */
    public boolean changeable() {
        return budgets != null;
    }

    /** The limits' gauges: domains tracked, and with them on, the state file's entries. */
    public void declareGauges(Registry meters) {
        meters.gauge("tracked_domains", "Registrable domains with a counter now.", this::tracked);
        if (active() && limiter.store().size() >= 0) {
            meters.gauge("state_file_domains", "Entries in the state file.", () -> limiter.store().size());
            meters.counter("state_file_failures", "Decisions the state file could not take, and allowed.",
                    () -> limiter.store().failures());
        }
    }

    /** For the startup line. */
    public String describe() {
        if (!active()) {
            return "limits off";
        }
        LimitSettings s = settings;
        String burst = s.algorithm() == LimitSettings.Algorithm.TOKEN_BUCKET && s.burst() > 0 ? " burst " + s.burst() : "";
        return "limits " + s.algorithm() + " " + s.defaultLimit() + burst + ", action " + s.action()
                + (s.dryRun() ? " (dry run)" : "") + ", " + s.domains().size() + " overrides, "
                + s.exemptClients().size() + " exempt networks, max-domains " + s.maxDomains()
                + (s.perClient().off() ? "" : ", per client " + s.perClient())
                + (s.maxInflightPerDomain() == 0 ? "" : ", at most " + s.maxInflightPerDomain() + " waiting per domain")
                + ", counters " + limiter.store().describe();
    }

    @Override
    public void close() {
        if (perClientJanitor != null) {
            perClientJanitor.close();
        }
        if (janitor != null) {
            janitor.close();
            limiter.store().close();
        }
    }
}
