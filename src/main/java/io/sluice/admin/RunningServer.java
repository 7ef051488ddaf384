package io.sluice.admin;

import io.sluice.cache.AnswerCache;
import io.sluice.config.ConfigException;
import io.sluice.config.LimitSettings;
import io.sluice.domain.RegistrableDomains;
import io.sluice.forward.Upstream;
import io.sluice.limit.Budgets;
import io.sluice.top.TopDomains;
import io.sluice.metrics.LatencyHistogram;
import java.util.List;
import java.util.Map;

/**
 * The running server as the admin API reads and changes it, and nothing more of it: the API
 * owns this view, and the server implements it, so that neither package reaches through the other.
 */
public interface RunningServer {
    /** Null while serving with an upstream up; else what is missing, for /readyz. */
    String notReady();

    /** Every metric in the Prometheus text format. */
    String metricsText();

    /** Every counter family's total, by name, in declaration order. */
    Map<String, Long> counters();

    /** Domains with a counter now. */
    int trackedDomains();

    /** The counters' algorithm, as started. */
    LimitSettings.Algorithm algorithm();

    /** The budgets the API changes, or null when limits cannot change while running. */
    Budgets budgets();

    /** Query names to registrable domains, as the limits reduce them. */
    RegistrableDomains domains();

    /** Whether {@code domain}'s budget is cut as a flood now. */
    boolean flooded(String domain);

    /** The busiest domains, or null when they are not worked out. */
    TopDomains top();

    List<Upstream> upstreams();

    /** The latency of the replies of the {@code index}-th upstream. */
    LatencyHistogram upstreamLatency(int index);

    /** The answer cache, or null when it is off. */
    AnswerCache cache();

    /**
     * Reads the configuration again and puts in force what can change while running.
     *
     * @return one line per change
     * @throws ConfigException when the file is invalid; nothing changes then
     */
    List<String> reload() throws ConfigException;
}
