package io.sluice.limit;

import io.sluice.config.ConfigException;
import io.sluice.config.LimitSettings;
import io.sluice.config.Network;
import io.sluice.domain.DomainKey;
import io.sluice.domain.RegistrableDomains;
import java.io.IOException;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * Everything the query handler needs to limit: the suffix list, the limiter, exempt clients, the
 * action and dry-run. {@link #active()} is false when no domain has a limit; then none of it runs.
 */
public final class Limits implements AutoCloseable {
    private final LimitSettings settings;
    private final RegistrableDomains domains;
    private final DomainLimiter limiter;
    private final Janitor janitor;
    private final Network[] exempt;

    private Limits(LimitSettings settings, RegistrableDomains domains, DomainLimiter limiter, Janitor janitor) {
        this.settings = settings;
        this.domains = domains;
        this.limiter = limiter;
        this.janitor = janitor;
        this.exempt = settings.exemptClients().toArray(new Network[0]);
    }

    /** {@link #from(LimitSettings, Clock, StoreOpener)} with the counters in memory. */
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
     * @param shared whether the budgets are shared through Redis (the counters keep more)
     * @throws ConfigException when the list file cannot be used, an override is not a registrable
     *                         domain, or the store cannot be opened
     */
    public static Limits from(LimitSettings s, Clock clock, StoreOpener stores, boolean shared)
            throws ConfigException {
        if (s.off()) {
            return new Limits(s, null, null, null);
        }
        RegistrableDomains domains;
        try {
            domains = s.publicSuffixList() == null ? RegistrableDomains.fromGuava()
                    : RegistrableDomains.fromFile(s.publicSuffixList());
        } catch (IOException e) {
            throw new ConfigException("public-suffix-list: " + s.publicSuffixList() + ": " + e.getMessage());
        }
        Map<DomainKey, Policy> overrides = new HashMap<>();
        for (var e : s.domains().entrySet()) {
            String name = e.getKey();
            String registrable;
            try {
                registrable = domains.reduce(name);
            } catch (IllegalArgumentException ex) {
                throw new ConfigException(s.origin(name) + ": " + ex.getMessage());
            }
            if (!registrable.equals(DomainKey.of(name).toString())) {
                throw new ConfigException(s.origin(name) + ": not a registrable domain (its queries count for "
                        + registrable + ")");
            }
            // A public suffix counts for itself, so the check above passes; but a name under it
            // counts for its own registrable domain, and the override would match only the bare suffix.
            if (isPublicSuffix(domains, name)) {
                throw new ConfigException(s.origin(name) + ": " + name + " is a public suffix: each domain under it"
                        + " has its own budget (name one, such as example." + name + ")");
            }
            overrides.put(DomainKey.of(name), policy(e.getValue(), s.burst()));
        }
        Policy defaultPolicy = policy(s.defaultLimit(), s.burst());
        CounterStore store = stores.open(key -> overrides.getOrDefault(key, defaultPolicy));
        DomainLimiter limiter = new DomainLimiter(Algorithm.of(s.algorithm()), store, defaultPolicy, overrides,
                s.maxDomains(), clock, shared);
        return new Limits(s, domains, limiter, new Janitor(limiter, s.dryRun(), s.maxDomains()));
    }

    /** A public suffix is the one name whose child is itself registrable. */
    private static boolean isPublicSuffix(RegistrableDomains domains, String name) {
        try {
            return domains.reduce("probe." + name).equals("probe." + name);
        } catch (IllegalArgumentException tooLong) {
            return false; // a name this long is no suffix
        }
    }

    private static Policy policy(LimitSettings.DomainLimit d, long burst) {
        return Policy.of(d.queries(), d.window(), burst);
    }

    public void start() {
        if (janitor != null) {
            janitor.start(settings.janitorInterval());
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

    public LimitSettings.Action action() {
        return settings.action();
    }

    public boolean dryRun() {
        return settings.dryRun();
    }

    /** Whether queries from {@code client} are never limited. */
    public boolean exempt(InetAddress client) {
        for (Network n : exempt) {
            if (n.contains(client)) {
                return true;
            }
        }
        return false;
    }

    /** Domains with a counter now; 0 when limits are off. */
    public int tracked() {
        return limiter == null ? 0 : limiter.tracked();
    }

    public boolean hasExemptions() {
        return exempt.length > 0;
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
                + ", counters " + limiter.store().describe();
    }

    @Override
    public void close() {
        if (janitor != null) {
            janitor.close();
            limiter.store().close();
        }
    }
}
