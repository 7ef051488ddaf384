package io.sluice.forward;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.sluice.config.ConfigException;
import io.sluice.config.Reloadable;
import io.sluice.config.Setting;
import io.sluice.config.Settings;
import io.sluice.metrics.LatencyHistogram;
import io.sluice.metrics.Registry;
import io.sluice.pipeline.InternalErrors;
import io.sluice.pipeline.MessageTap;
import io.sluice.pipeline.Module;
import io.sluice.pipeline.Stage;
import io.sluice.pipeline.UpstreamGate;
import io.sluice.transport.WriteBatch;
import io.sluice.pipeline.OnLoop;
import io.sluice.transport.Transport;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The forwarding side over the server's life: each loop's {@link ForwardStage}, the generation of
 * {@link Generation} in force, and the generations a reload replaced, which answer the queries
 * they have in flight until closed a query-timeout later. Also the {@code upstream_up} gauges of
 * the upstreams in force.
 *
 * <p>Switching, retiring and closing hold this object's lock, so a generation is never retired
 * while a reload makes the next one (which may declare the same upstreams' series again).
 * {@link #retiring} is read without it by {@link #inFlight}: a copy-on-write list.
 */
public final class Forwarding implements Module, Reloadable {
    /** How long past query-timeout a replaced generation stays open: its ticks may notice an expiry late. */
    private static final long RETIRE_MARGIN_MILLIS = 1000;

    /** Makes and connects a generation from a set of settings, on every loop. */
    @FunctionalInterface
    private interface Generations {
        Generation start(Settings settings) throws InterruptedException;
    }

    private final Generations generations;
    private final Registry meters;
    private final List<ForwardStage> stages = new ArrayList<>();
    /** The upstreams and timeouts as started, for the startup line. */
    private String description;
    private volatile Generation current;
    /** The query timeout {@link #current} was made with: what its queries in flight may still take. */
    private long drainMillis;
    private final List<Generation> retiring = new CopyOnWriteArrayList<>();
    private boolean closed;
    private final ScheduledExecutorService retirer = Executors.newSingleThreadScheduledExecutor(
            new ThreadFactoryBuilder().setNameFormat("sluice-retire").setDaemon(true).build());

    private Forwarding(Generations generations, Registry meters) {
        this.generations = generations;
        this.meters = meters;
    }

    /**
     * Makes the first generation on every loop of {@code group}, and a last stage per loop that
     * forwards to it; from outside the loops.
     *
     * @param writes  each loop's writes, in the group's order: every generation's forwarder there writes through them
     * @param tap     dnstap, or null
     * @param gate    what bounds the queries of a domain waiting on upstreams, over every generation
     */
    public static Forwarding start(EventLoopGroup group, Transport transport, Settings settings, Registry meters,
                                   List<WriteBatch> writes, InternalErrors errors, MessageTap tap, UpstreamGate gate)
            throws InterruptedException {
        Forwarding made = new Forwarding(s -> Generation.start(group, transport, s, meters, writes, errors, tap, gate),
                meters);
        Generation first = made.generations.start(settings);
        for (Forwarder f : first.perLoop()) {
            made.stages.add(new ForwardStage(f));
        }
        made.use(first, settings);
        made.description = "upstreams " + settings.upstreams().stream().map(Object::toString)
                .collect(Collectors.joining(", ")) + " (timeout " + settings.timeout().toMillis() + " ms, query-timeout "
                + settings.queryTimeout().toMillis() + " ms)";
        return made;
    }

    /** For the startup line: the upstreams and their timeouts, as started. */
    public String describe() {
        return description;
    }

    /** The last stage of {@code loop}'s query path: it answers every query that reaches it. */
    @Override
    public Stage stage(EventLoop loop) {
        for (ForwardStage s : stages) {
            if (s.loop() == loop) {
                return s;
            }
        }
        throw new IllegalArgumentException("not a loop of the group forwarding was started on");
    }

    public List<Upstream> upstreams() {
        return current.upstreams();
    }

    /** The latency of the replies of the {@code index}-th upstream in force. */
    public LatencyHistogram latency(int index) {
        return current.latency(index);
    }

    /** A reload's upstreams and every way they are asked: a new generation ({@link #switchTo}). */
    @Override
    public Setting.Applied part() {
        return Setting.Applied.FORWARDING;
    }

    @Override
    public void apply(Settings next) throws ConfigException, InterruptedException {
        try {
            switchTo(next);
        } catch (RuntimeException e) { // a socket the kernel refuses, an address family the host cannot reach
            throw new ConfigException("upstreams: cannot use them: " + e.getMessage());
        }
    }

    /**
     * Puts a new generation made from {@code applied} in force: made and connected first (a
     * failure changes nothing), then handed to every loop's last stage, each on its own loop. The
     * old one answers the queries it has in flight and is closed after the query timeout.
     *
     * @throws IllegalStateException once closed
     */
    public synchronized void switchTo(Settings applied) throws InterruptedException {
        if (closed) {
            throw new IllegalStateException("stopping");
        }
        Generation next = generations.start(applied);
        Generation old = current;
        for (int i = 0; i < stages.size(); i++) {
            ForwardStage stage = stages.get(i);
            Forwarder f = next.perLoop().get(i);
            f.loop().execute(() -> stage.switchTo(f));
        }
        long oldDrainMillis = drainMillis;
        use(next, applied);
        retiring.add(old);
        retirer.schedule(() -> retire(old), oldDrainMillis, TimeUnit.MILLISECONDS);
    }

    private void use(Generation next, Settings settings) {
        current = next;
        drainMillis = settings.queryTimeout().toMillis() + RETIRE_MARGIN_MILLIS;
        meters.removeGauges("upstream_up");
        for (Upstream u : next.upstreams()) {
            meters.gauge("upstream_up", "1 while an upstream is up, 0 while marked down.", () -> u.isDown() ? 0 : 1,
                    "upstream", u.toString());
        }
    }

    private synchronized void retire(Generation old) {
        if (!retiring.remove(old)) {
            return;
        }
        old.close();
        Set<String> asked = new HashSet<>();
        current.upstreams().forEach(u -> asked.add(u.toString()));
        retiring.forEach(r -> r.upstreams().forEach(u -> asked.add(u.toString())));
        for (Upstream u : old.upstreams()) {
            if (!asked.contains(u.toString())) {
                meters.removeSeries("upstream", u.toString()); // a reload removed it: no series lingers
            }
        }
    }

    /** Queries in flight now in every generation, each counted on its loop; from outside the loops. */
    public int inFlight() {
        List<Forwarder> all = new ArrayList<>(current.perLoop());
        retiring.forEach(r -> all.addAll(r.perLoop()));
        int n = 0;
        for (Forwarder f : all) {
            n += OnLoop.count(f.loop(), f::inFlight);
        }
        return n;
    }

    /** Closes every generation; no switch after it. */
    @Override
    public synchronized void close() {
        closed = true;
        retirer.shutdownNow();
        current.close();
        for (Generation r : List.copyOf(retiring)) {
            retire(r);
        }
    }
}
