package io.sluice;

import io.sluice.admin.RunningServer;
import io.sluice.cache.AnswerCache;
import io.sluice.config.ConfigException;
import io.sluice.config.LimitSettings;
import io.sluice.domain.RegistrableDomains;
import io.sluice.forward.Forwarding;
import io.sluice.forward.Upstream;
import io.sluice.frontend.Frontend;
import io.sluice.limit.Budgets;
import io.sluice.limit.Limits;
import io.sluice.top.TopDomains;
import io.sluice.metrics.LatencyHistogram;
import io.sluice.metrics.MetricsEndpoint;
import io.sluice.metrics.Registry;
import java.util.List;
import java.util.Map;

/** The running server as the admin API reads and changes it: the parts' answers, and the reload. */
record AdminView(Reloader reloader, Limits limits, Forwarding forwarding, AnswerCache cache, TopDomains top,
                 Registry meters, MetricsEndpoint metrics, Frontend frontend) implements RunningServer {
    @Override
    public String notReady() {
        if (frontend.addresses().isEmpty()) {
            return "not listening";
        }
        return forwarding.upstreams().stream().allMatch(Upstream::isDown) ? "every upstream is down" : null;
    }

    @Override
    public String metricsText() {
        return metrics.text();
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

    @Override
    public List<Upstream> upstreams() {
        return forwarding.upstreams();
    }

    @Override
    public LatencyHistogram upstreamLatency(int index) {
        return forwarding.latency(index);
    }

    @Override
    public List<String> reload() throws ConfigException {
        return reloader.reload();
    }
}
