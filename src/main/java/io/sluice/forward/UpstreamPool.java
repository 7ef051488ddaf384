package io.sluice.forward;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import io.sluice.config.Settings;
import io.sluice.wire.Wire;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.nio.ByteBuffer;
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

/**
 * The upstreams in the operator's order, and the background prober that brings a down upstream
 * back. Probing and its log lines happen on the prober's own thread, never on an event loop.
 */
public final class UpstreamPool implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(UpstreamPool.class);
    /** The probe reads only the header; a longer reply is cut, which a datagram read allows. */
    private static final int MAX_PROBE_REPLY_BYTES = 512;

    private final List<Upstream> upstreams;
    private final Duration timeout;
    private final Duration probeInterval;
    private final Settings.HealthCheck check;
    private final ScheduledExecutorService prober = Executors.newSingleThreadScheduledExecutor(
            new ThreadFactoryBuilder().setNameFormat("sluice-health").setDaemon(true).build());

    public UpstreamPool(List<InetSocketAddress> addresses, int maxFails, Duration timeout, Duration probeInterval,
                        Settings.HealthCheck check) {
        List<Upstream> list = new ArrayList<>();
        for (InetSocketAddress a : addresses) {
            list.add(new Upstream(list.size(), a, maxFails));
        }
        this.upstreams = List.copyOf(list);
        this.timeout = timeout;
        this.probeInterval = probeInterval;
        this.check = check;
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
        if (answersProbe(u)) {
            u.markUp();
            log.info("upstream {} answers again", u);
        } else if (!prober.isShutdown()) {
            scheduleProbe(u);
        }
    }

    /**
     * Sends the probe ({@code health-check-name} and {@code -type}) and waits up to the timeout.
     * Any response with the probe's ID from the upstream is alive, whatever its RCODE, unless
     * {@code health-check-must-resolve} asks for NOERROR: a forward-only resolver that cannot
     * reach the root, or a split-horizon one, answers the root's NS with an error, yet serves.
     */
    private boolean answersProbe(Upstream u) {
        try (DatagramSocket socket = new DatagramSocket()) {
            socket.connect(u.address()); // only the upstream's datagrams are delivered
            Message query = Message.newQuery(Record.newRecord(Name.fromString(check.name()), check.type(), DClass.IN));
            int id = query.getHeader().getID();
            byte[] wire = query.toWire();
            socket.send(new DatagramPacket(wire, wire.length));
            byte[] buf = new byte[MAX_PROBE_REPLY_BYTES];
            long deadline = System.nanoTime() + timeout.toNanos();
            for (long left = timeout.toNanos(); left > 0; left = deadline - System.nanoTime()) {
                socket.setSoTimeout((int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                DatagramPacket p = new DatagramPacket(buf, buf.length);
                socket.receive(p);
                ByteBuffer reply = ByteBuffer.wrap(buf, 0, p.getLength());
                if (p.getLength() >= Wire.HEADER_BYTES && (reply.getShort(Wire.ID_OFFSET) & 0xFFFF) == id
                        && (reply.getShort(Wire.FLAGS_OFFSET) & Wire.FLAG_QR) != 0) {
                    int rcode = reply.getShort(Wire.FLAGS_OFFSET) & Wire.RCODE_MASK;
                    return !check.mustResolve() || rcode == Wire.RCODE_NOERROR;
                }
            }
            return false;
        } catch (IOException e) {
            return false; // timed out, port unreachable, no route
        }
    }

    /** Every upstream, in order. */
    public List<Upstream> upstreams() {
        return upstreams;
    }

    @Override
    public void close() {
        prober.shutdownNow();
    }
}
