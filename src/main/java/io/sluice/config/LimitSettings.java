package io.sluice.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The per-domain limits, validated. Documented key by key in {@code conf/sluice.yml}.
 *
 * @param defaultLimit     what a domain without an override gets
 * @param algorithm        how counts are kept over time
 * @param burst            token-bucket capacity; 0 means the limit
 * @param action           what an over-limit query gets
 * @param dryRun           count and log what would be refused, but forward everything
 * @param maxDomains       bound of the counter table
 * @param janitorInterval  how often counters of ended windows are removed
 * @param publicSuffixList a list file to use instead of Guava's, or null
 * @param domains          overrides by registrable domain, as written
 * @param exemptClients    client networks never limited
 * @param origins          where each override was written (file and line), by domain, for errors
 *                         found once the suffix list is loaded
 * @param reverseIpv4Prefix reverse names under in-addr.arpa count per network of this many bits
 * @param reverseIpv6Prefix reverse names under ip6.arpa count per network of this many bits
 * @param perClient        each client network's budget per registrable domain, on top of the domain's
 * @param flood            when a domain's upstream answers are mostly NXDOMAIN, and what its budget becomes
 * @param maxInflightPerDomain the most queries of one registrable domain waiting on upstreams at
 *                         once; 0: no bound
 * @param verifiedShare    the share of each domain's budget that unverified queries (UDP without a
 *                         valid server cookie) cannot spend; 0: none
 * @param slip             of the unverified UDP queries a limit refuses, every slip-th gets an empty
 *                         TC answer instead; 0: none
 */
public record LimitSettings(
        DomainLimit defaultLimit,
        Algorithm algorithm,
        long burst,
        Action action,
        boolean dryRun,
        int maxDomains,
        Duration janitorInterval,
        Path publicSuffixList,
        Map<String, DomainLimit> domains,
        List<Network> exemptClients,
        Map<String, String> origins,
        int reverseIpv4Prefix,
        int reverseIpv6Prefix,
        PerClient perClient,
        Flood flood,
        int maxInflightPerDomain,
        double verifiedShare,
        int slip) {

    public LimitSettings {
        domains = Map.copyOf(domains);
        exemptClients = List.copyOf(exemptClients);
        origins = Map.copyOf(origins);
    }

    /** Where the override of {@code domain} was written, as an error's prefix. */
    public String origin(String domain) {
        return origins.getOrDefault(domain, "limits.domains." + domain);
    }

    /** True when no domain can ever be limited or bounded: the limiter is not even consulted. */
    public boolean off() {
        return defaultLimit.unlimited() && domains.values().stream().allMatch(DomainLimit::unlimited) && perClient.off()
                && maxInflightPerDomain == 0;
    }

    /**
     * Budgets per client network and registrable domain: a query passes only when its client's
     * budget and its domain's both allow it. {@link DomainLimit#UNLIMITED} turns them off.
     */
    public record PerClient(DomainLimit limit, int ipv4Prefix, int ipv6Prefix) {
        public boolean off() {
            return limit.unlimited();
        }

        @Override
        public String toString() {
            return off() ? "off" : limit + " per /" + ipv4Prefix + " and /" + ipv6Prefix;
        }
    }

    /**
     * Random-subdomain flood detection: a domain whose upstream answers in a window were at least
     * {@code minAnswers} and {@code pressure} of its budget (at most 2,047: a window is judged on its
     * first 2,047 answers) and at least {@code nxdomainRatio} of
     * them NXDOMAIN has its budget cut to {@code fraction} of its limit until a window's ratio falls
     * below that again. A domain {@link #exempts exempted} is never cut.
     */
    public record Flood(boolean detect, double nxdomainRatio, int minAnswers, double fraction, double pressure,
                        List<String> exemptDomains) {
        public Flood {
            exemptDomains = List.copyOf(exemptDomains);
        }

        /**
         * Whether {@code registrable} (a registrable domain, as the flood watch names one) is
         * exempt: listed, or the domain of a listed name (the cut is per registrable domain, so
         * listing zen.spamhaus.org exempts spamhaus.org).
         */
        public boolean exempts(String registrable) {
            for (String d : exemptDomains) {
                if (d.equals(registrable) || d.endsWith("." + registrable)) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public String toString() {
            return !detect ? "off" : "budget x" + fraction + " at " + Math.round(nxdomainRatio * 100)
                    + "% NXDOMAIN of " + minAnswers + "+ answers";
        }
    }

    /** A number of queries per window; {@link #UNLIMITED} has no bound. */
    public record DomainLimit(long queries, Duration window) {
        public static final DomainLimit UNLIMITED = new DomainLimit(0, Duration.ofSeconds(1));

        public boolean unlimited() {
            return queries == 0;
        }

        @Override
        public String toString() {
            return unlimited() ? "unlimited" : queries + " per " + Durations.text(window);
        }
    }

    /** The counting algorithms; each prints as its configuration name. */
    public enum Algorithm {
        FIXED_WINDOW, SLIDING_WINDOW, TOKEN_BUCKET;

        @Override
        public String toString() {
            return Values.configName(this);
        }
    }

    /** What an over-limit query gets; each prints as its configuration name. */
    public enum Action {
        REFUSED, NXDOMAIN, DROP, TRUNCATE;

        @Override
        public String toString() {
            return Values.configName(this);
        }
    }
}
