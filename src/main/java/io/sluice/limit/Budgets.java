package io.sluice.limit;

import io.sluice.config.LimitSettings;
import io.sluice.config.LimitSettings.DomainLimit;
import io.sluice.domain.DomainKey;
import io.sluice.domain.RegistrableDomains;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Every domain's budget and where it comes from: the default and the file's overrides, replaced
 * together by a reload, and the runtime entries of the admin API, which win over both until they
 * expire or are removed, reload or not. A restart keeps only the file.
 *
 * <p>Changes are rare and made off the loops under this object's lock; each publishes one new
 * {@link LimitRules} to the limiter, which the next query on every loop reads.
 */
public final class Budgets {
    /** A runtime entry: its budget ({@link DomainLimit#UNLIMITED} for none), why, and until when. */
    public record Runtime(String domain, DomainLimit limit, long burst, String reason, long expiresEpochNanos,
                          String setBy) {
        /** No expiry. */
        public static final long NEVER = Long.MAX_VALUE;
    }

    /** What {@link #view} shows. */
    public record View(DomainLimit defaultLimit, Map<String, DomainLimit> file, List<Runtime> runtime) {
    }

    private final DomainLimiter limiter;
    private final RegistrableDomains domains;
    private final Clock clock;
    private DomainLimit defaultLimit;
    private Map<String, DomainLimit> file;
    private long burst;
    private final Map<String, Runtime> runtime = new TreeMap<>();

    Budgets(DomainLimiter limiter, RegistrableDomains domains, Clock clock, DomainLimit defaultLimit,
            Map<String, DomainLimit> file, long burst) {
        this.limiter = limiter;
        this.domains = domains;
        this.clock = clock;
        this.defaultLimit = defaultLimit;
        this.file = new TreeMap<>(file);
        this.burst = burst;
    }

    /**
     * The registrable domain {@code name} is (lower case, A-labels), checked as an override key.
     *
     * @throws IllegalArgumentException naming the domain its queries count for, when it is not one
     */
    public static String registrable(RegistrableDomains domains, String name) {
        String registrable = domains.reduce(name);
        if (!registrable.equals(DomainKey.of(name).toString())) {
            throw new IllegalArgumentException("not a registrable domain (" + name + " counts for " + registrable + ")");
        }
        // A public suffix counts for itself, so the check above passes; but a name under it counts
        // for its own registrable domain, and an override would match only the bare suffix.
        if (isPublicSuffix(domains, name)) {
            throw new IllegalArgumentException(name + " is a public suffix: each domain under it has its own"
                    + " budget (name one, such as example." + name + ")");
        }
        return registrable;
    }

    /** A public suffix is the one name whose child is itself registrable. */
    private static boolean isPublicSuffix(RegistrableDomains domains, String name) {
        try {
            return domains.reduce("probe." + name).equals("probe." + name);
        } catch (IllegalArgumentException tooLong) {
            return false; // a name this long is no suffix
        }
    }

    /**
     * Sets a runtime budget for {@code domain} (already in A-labels), replacing any before it.
     *
     * @param ttl how long it holds, or null for until removed
     * @return the entry as set
     * @throws IllegalArgumentException when {@code domain} is not a registrable domain
     */
    public synchronized Runtime set(String domain, DomainLimit limit, long entryBurst, Duration ttl, String reason,
                                    String setBy) {
        String d = registrable(domains, domain);
        long expires = ttl == null ? Runtime.NEVER : clock.epochNanos() + ttl.toNanos();
        Runtime r = new Runtime(d, limit, entryBurst, reason, expires, setBy);
        Map<String, Runtime> next = new TreeMap<>(runtime);
        next.put(d, r);
        PolicyTable table = table(defaultLimit, file, burst, next); // may throw: then nothing changed
        runtime.put(d, r);
        limiter.policies(table);
        return r;
    }

    /** Removes the runtime budget of {@code domain}; false when it had none. */
    public synchronized boolean remove(String domain) {
        boolean removed = runtime.remove(DomainKey.of(domain).toString()) != null;
        if (removed) {
            publish();
        }
        return removed;
    }

    /** A reload's limits, published with the runtime entries as one set of rules; the runtime entries stay. */
    synchronized void reload(LimitSettings next) {
        PolicyTable table = table(next.defaultLimit(), next.domains(), next.burst(), runtime); // may throw: then nothing changed
        defaultLimit = next.defaultLimit();
        file = new TreeMap<>(next.domains());
        burst = next.burst();
        limiter.rules(LimitRules.of(table, next));
    }

    /** Drops the runtime entries whose time is up; the janitor calls it every sweep. */
    synchronized List<Runtime> expire() {
        long now = clock.epochNanos();
        List<Runtime> gone = new ArrayList<>();
        runtime.values().removeIf(r -> {
            boolean expired = r.expiresEpochNanos() != Runtime.NEVER && now - r.expiresEpochNanos() >= 0;
            if (expired) {
                gone.add(r);
            }
            return expired;
        });
        if (!gone.isEmpty()) {
            publish();
        }
        return gone;
    }

    public synchronized View view() {
        return new View(defaultLimit, Map.copyOf(file), List.copyOf(runtime.values()));
    }

    /** The budget a query for {@code domain} (a registrable domain) gets now. */
    public synchronized DomainLimit effective(String domain) {
        Runtime r = runtime.get(domain);
        return r != null ? r.limit() : file.getOrDefault(domain, defaultLimit);
    }

    private void publish() {
        limiter.policies(table(defaultLimit, file, burst, runtime));
    }

    /** The table these would put in force: runtime entries over the file's overrides over the default. */
    private static PolicyTable table(DomainLimit defaultLimit, Map<String, DomainLimit> file, long burst,
                                     Map<String, Runtime> runtime) {
        Map<DomainKey, Policy> overrides = new HashMap<>();
        file.forEach((d, l) -> overrides.put(DomainKey.of(d), policy(l, burst)));
        runtime.forEach((d, r) -> overrides.put(DomainKey.of(d), policy(r.limit(), r.burst())));
        return new PolicyTable(policy(defaultLimit, burst), overrides);
    }

    static Policy policy(DomainLimit l, long burst) {
        return Policy.of(l.queries(), l.window(), burst);
    }
}
