package io.sluice.forward;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.SimpleResolver;
import org.xbill.DNS.Type;

/**
 * The upstreams in the operator's order, and the background prober that brings a down upstream
 * back. Probing and its log lines happen on the prober's own thread, never on an event loop.
 */
public final class UpstreamPool implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(UpstreamPool.class);

    private final List<Upstream> upstreams;
    private final Duration timeout;
    private final Duration probeInterval;
    private final ScheduledExecutorService prober = Executors.newSingleThreadScheduledExecutor(
            new ThreadFactoryBuilder().setNameFormat("sluice-health").setDaemon(true).build());

    public UpstreamPool(List<InetSocketAddress> addresses, int maxFails, Duration timeout, Duration probeInterval) {
        List<Upstream> list = new ArrayList<>();
        for (InetSocketAddress a : addresses) {
            list.add(new Upstream(list.size(), a, maxFails));
        }
        this.upstreams = List.copyOf(list);
        this.timeout = timeout;
        this.probeInterval = probeInterval;
    }

    public List<Upstream> upstreams() {
        return upstreams;
    }

    int size() {
        return upstreams.size();
    }

    Upstream get(int index) {
        return upstreams.get(index);
    }

    /**
     * The index of the upstream to try next, from {@code from} on in order, skipping those that are
     * down; -1 when none is left. When every upstream is down, a query's first attempt still goes
     * to the first one, so that clients get an answer as soon as it is back.
     */
    int pick(int from, boolean firstAttempt) {
        for (int i = from; i < upstreams.size(); i++) {
            if (!upstreams.get(i).isDown()) {
                return i;
            }
        }
        return firstAttempt && from < upstreams.size() ? from : -1;
    }

    /** Called by the event loop whose timeout marked {@code u} down; returns at once. */
    void markedDown(Upstream u) {
        prober.execute(() -> {
            log.warn("upstream {} is down after consecutive failures (timeouts, port unreachable); probing it every {} ms",
                    u, probeInterval.toMillis());
            scheduleProbe(u);
        });
    }

    private void scheduleProbe(Upstream u) {
        prober.schedule(() -> probe(u), probeInterval.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void probe(Upstream u) {
        try {
            SimpleResolver resolver = new SimpleResolver(u.address());
            resolver.setTimeout(timeout);
            resolver.send(Message.newQuery(Record.newRecord(Name.root, Type.NS, DClass.IN)));
            u.markUp();
            log.info("upstream {} answers again", u);
        } catch (Exception e) {
            if (!prober.isShutdown()) {
                scheduleProbe(u);
            }
        }
    }

    @Override
    public void close() {
        prober.shutdownNow();
    }
}
