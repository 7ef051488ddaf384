package io.sluice.forward;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import io.sluice.config.Settings;
import io.sluice.config.UpstreamAddress;
import io.sluice.transport.UpstreamTls;
import io.sluice.wire.Wire;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.TextParseException;

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
    private final UpstreamTls tls;
    /** Per upstream, why its last probe over TLS failed, so that each reason is logged once. Prober's thread only. */
    private final Map<Upstream, String> tlsTrouble = new HashMap<>();
    private final ScheduledExecutorService prober = Executors.newSingleThreadScheduledExecutor(
            new ThreadFactoryBuilder().setNameFormat("sluice-health").setDaemon(true).build());

    /**
     * @param tls              what the {@code tls://} upstreams are asked through; null when none is
     * @param sentClientSubnet the upstreams sent Client Subnet (ecs.upstreams); empty for all
     */
    public UpstreamPool(List<UpstreamAddress> addresses, UpstreamTls tls, int maxFails, Duration timeout,
                        Duration probeInterval, Settings.HealthCheck check, List<UpstreamAddress> sentClientSubnet) {
        List<Upstream> list = new ArrayList<>();
        for (UpstreamAddress a : addresses) {
            list.add(new Upstream(list.size(), a, maxFails, sentClientSubnet.isEmpty() || sentClientSubnet.contains(a)));
        }
        this.upstreams = List.copyOf(list);
        this.tls = tls;
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

    /** What {@code tls://} upstreams are asked through; null when none is. */
    UpstreamTls tls() {
        return tls;
    }

    /**
     * The position of the upstream to try next in a query's order (the upstreams from index
     * {@code first} on, wrapping round), from position {@code from} on, skipping those that are
     * down; -1 when none is left. When every upstream is down, a query's first attempt still goes
     * to its first, so that clients get an answer as soon as one is back.
     */
    int pick(int first, int from, boolean firstAttempt) {
        for (int p = from; p < upstreams.size(); p++) {
            if (!upstreams.get(at(first, p)).isDown()) {
                return p;
            }
        }
        return firstAttempt && from < upstreams.size() ? from : -1;
    }

    /** The index of the upstream at {@code position} of the order that starts at index {@code first}. */
    int at(int first, int position) {
        int i = first + position;
        return i < upstreams.size() ? i : i - upstreams.size();
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
        Message query;
        try {
            query = Message.newQuery(Record.newRecord(Name.fromString(check.name()), check.type(), DClass.IN));
        } catch (TextParseException e) {
            throw new IllegalStateException("health-check-name was checked with the settings", e);
        }
        return u.overTls() ? answersOverTls(u, query.toWire(), query.getHeader().getID())
                : answersOverUdp(u, query.toWire(), query.getHeader().getID());
    }

    private boolean answersOverUdp(Upstream u, byte[] wire, int id) {
        try (DatagramSocket socket = new DatagramSocket()) {
            socket.connect(u.address()); // only the upstream's datagrams are delivered
            socket.send(new DatagramPacket(wire, wire.length));
            byte[] buf = new byte[MAX_PROBE_REPLY_BYTES];
            long deadline = System.nanoTime() + timeout.toNanos();
            for (long left = timeout.toNanos(); left > 0; left = deadline - System.nanoTime()) {
                socket.setSoTimeout((int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                DatagramPacket p = new DatagramPacket(buf, buf.length);
                socket.receive(p);
                if (isReply(ByteBuffer.wrap(buf, 0, p.getLength()), id)) {
                    return isAlive(ByteBuffer.wrap(buf, 0, p.getLength()));
                }
            }
            return false;
        } catch (IOException e) {
            return false; // timed out, port unreachable, no route
        }
    }

    /**
     * The probe on a TLS connection of its own, certificate and name checked as the loops check
     * them. Why a handshake failed (an expired certificate, another name) is logged once per
     * reason: it is what an operator needs to bring the upstream back.
     */
    private boolean answersOverTls(Upstream u, byte[] wire, int id) {
        try (SSLSocket s = tls.connect(u.tlsName(), u.address(), (int) Math.max(1, timeout.toMillis()))) {
            if (tlsTrouble.remove(u) != null) {
                log.info("upstream {}: TLS handshake succeeds again", u);
            }
            byte[] framed = new byte[2 + wire.length]; // one record, as the loops send: TcpFraming.addOneRecordEachTo
            framed[0] = (byte) (wire.length >> 8);
            framed[1] = (byte) wire.length;
            System.arraycopy(wire, 0, framed, 2, wire.length);
            s.getOutputStream().write(framed);
            DataInputStream in = new DataInputStream(s.getInputStream());
            byte[] reply = in.readNBytes(in.readUnsignedShort());
            return isReply(ByteBuffer.wrap(reply), id) && isAlive(ByteBuffer.wrap(reply));
        } catch (SSLException e) {
            String why = String.valueOf(e.getMessage());
            if (!why.equals(tlsTrouble.put(u, why))) {
                log.warn("upstream {}: TLS handshake failed: {}", u, why);
            }
            return false;
        } catch (IOException e) {
            return false; // timed out, refused, closed
        }
    }

    private static boolean isReply(ByteBuffer reply, int id) {
        return reply.limit() >= Wire.HEADER_BYTES && (reply.getShort(Wire.ID_OFFSET) & 0xFFFF) == id
                && (reply.getShort(Wire.FLAGS_OFFSET) & Wire.FLAG_QR) != 0;
    }

    private boolean isAlive(ByteBuffer reply) {
        return !check.mustResolve() || (reply.getShort(Wire.FLAGS_OFFSET) & Wire.RCODE_MASK) == Wire.RCODE_NOERROR;
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
