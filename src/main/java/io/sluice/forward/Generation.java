package io.sluice.forward;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.sluice.config.Settings;
import io.sluice.ecs.EcsSettings;
import io.sluice.config.UpstreamAddress;
import io.sluice.metrics.LatencyHistogram;
import io.sluice.metrics.Registry;
import io.sluice.pipeline.InternalErrors;
import io.sluice.pipeline.MessageTap;
import io.sluice.pipeline.UpstreamGate;
import io.sluice.transport.WriteBatch;
import io.sluice.transport.Transport;
import io.sluice.transport.UpstreamTls;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.List;

/**
 * One generation of the forwarding side: the upstream pool the event loops share and a
 * {@link Forwarder} per loop, made from one set of settings. A reload that changes the upstreams
 * or how they are asked makes a new generation and switches each loop's {@link ForwardStage} to
 * it; the old generation keeps its sockets, so that the replies to its queries in flight still
 * arrive, until it is closed a query-timeout later.
 */
public final class Generation {
    private final UpstreamPool pool;
    private final ForwardMeters meters;
    private final List<Forwarder> perLoop;

    private Generation(UpstreamPool pool, ForwardMeters meters, List<Forwarder> perLoop) {
        this.pool = pool;
        this.meters = meters;
        this.perLoop = perLoop;
    }

    /**
     * Makes a generation on every loop of {@code group} and connects its sockets; from outside the loops.
     *
     * @param writes  each loop's writes, in the group's order
     * @param errors  where a bug met by a deadline tick is counted
     * @param tap     what sees the messages to and from upstreams (dnstap), or null
     * @param gate    what bounds the queries of a domain waiting on upstreams
     */
    public static Generation start(EventLoopGroup group, Transport transport, Settings settings, Registry registry,
                                   List<WriteBatch> writes, InternalErrors errors, MessageTap tap, UpstreamGate gate)
            throws InterruptedException {
        ForwardMeters meters = new ForwardMeters(registry, settings.upstreams());
        UpstreamPool pool = new UpstreamPool(settings.upstreams(), upstreamTls(settings), settings.maxFails(),
                settings.timeout(), settings.healthCheckInterval(), settings.healthCheck(),
                settings.value(EcsSettings.UPSTREAMS));
        for (Upstream u : pool.upstreams()) {
            registry.gaugeSeconds("upstream_rtt_seconds", "The smoothed round-trip time to the upstream (RFC 6298),"
                    + " as a thread last published it; absent before its first reply.", u::rttNanos, "upstream", u.toString());
        }
        List<Forwarder> perLoop = new ArrayList<>();
        Generation made = new Generation(pool, meters, perLoop);
        int inflightPerLoop = Math.max(1, settings.maxInflight() / settings.threads());
        try {
            int i = 0;
            for (EventExecutor e : group) {
                Forwarder f = new Forwarder((EventLoop) e, pool, meters, transport, settings, inflightPerLoop,
                        writes.get(i++), errors, tap, gate);
                perLoop.add(f);
                f.start();
            }
        } catch (InterruptedException | RuntimeException e) {
            made.close();
            throw e;
        }
        return made;
    }

    /** The forwarders, one per loop, in the group's order. */
    public List<Forwarder> perLoop() {
        return perLoop;
    }

    /** The TLS of the generation's tls:// upstreams, or null when none is; its file was checked with the settings. */
    private static UpstreamTls upstreamTls(Settings settings) {
        if (settings.upstreams().stream().noneMatch(UpstreamAddress::overTls)) {
            return null;
        }
        try {
            return UpstreamTls.load(settings.upstreamTlsCaFile());
        } catch (GeneralSecurityException e) { // changed since it was checked
            throw new IllegalStateException("upstream-tls-ca-file: " + e.getMessage(), e);
        }
    }

    public List<Upstream> upstreams() {
        return pool.upstreams();
    }

    /** The latency of the replies of the {@code index}-th upstream. */
    public LatencyHistogram latency(int index) {
        return meters.latency(index);
    }

    /** Closes each forwarder on its loop, and the pool's prober. */
    public void close() {
        for (Forwarder f : perLoop) {
            f.loop().execute(f::close);
        }
        pool.close();
    }
}
