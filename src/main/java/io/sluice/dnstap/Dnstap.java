package io.sluice.dnstap;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.EventLoop;
import io.netty.util.internal.PlatformDependent;
import io.sluice.config.DnstapSettings;
import io.sluice.config.Reloadable;
import io.sluice.config.Setting;
import io.sluice.config.Settings;
import io.sluice.metrics.Registry;
import io.sluice.pipeline.MessageTap;
import io.sluice.pipeline.Module;
import io.sluice.pipeline.Outcome;
import io.sluice.pipeline.Query;
import io.sluice.pipeline.Route;
import io.sluice.pipeline.Stage;
import io.sluice.transport.SocketProtocol;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Queue;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * dnstap: every message of the query path (a client's query and its answer, a query to an
 * upstream and its reply) as a dnstap protobuf, in Frame Streams to a reader's unix socket, as
 * Unbound's {@code dnstap-socket-path} and dnsdist's {@code newFrameStreamUnixLogger} write.
 *
 * <p>A loop copies the message and its addresses into a bounded queue shared by the loops (a
 * lock-free one, Netty's own kind for its task queues) and goes on; {@link DnstapWriter}'s thread
 * does the rest. A full queue (a slow reader), or no reader at all, drops the message and counts
 * it in {@code dnstap_dropped}: a query never waits for its log.
 */
public final class Dnstap implements MessageTap, Module, Reloadable {
    private final Queue<DnstapEvent> queue;
    private final LongAdder dropped;
    private final LongSupplier clock;
    private final String defaultVersion;
    private final DnstapWriter writer;
    /** The kinds written, a bit per {@code DnstapSettings.Message}'s ordinal; a reload changes it. */
    private volatile int kinds;

    private Dnstap(DnstapSettings settings, String defaultVersion, LongSupplier epochNanos, Registry meters) {
        this.queue = PlatformDependent.newFixedMpscQueue(settings.queueSize());
        this.clock = epochNanos;
        this.defaultVersion = defaultVersion;
        this.dropped = meters.counter("dnstap_dropped",
                "dnstap messages dropped: the queue to the reader was full (dnstap.queue-size), or no reader was connected.");
        LongAdder written = meters.counter("dnstap_written", "dnstap messages written to the reader.");
        this.writer = new DnstapWriter(queue, target(settings), dropped, written);
        this.kinds = kinds(settings);
        meters.gauge("dnstap_connected", "1 while a dnstap reader is connected, else 0.",
                () -> writer.connected() ? 1 : 0);
    }

    /**
     * Starts writing to {@code settings.socket()}, now or when a reader listens there.
     *
     * @param defaultVersion what each message gives as the version when {@code dnstap.version} is unset
     * @param epochNanos     the time messages are stamped with
     */
    public static Dnstap start(DnstapSettings settings, String defaultVersion, LongSupplier epochNanos,
                               Registry meters) {
        Dnstap d = new Dnstap(settings, defaultVersion, epochNanos, meters);
        d.writer.start();
        return d;
    }

    /** This module's stage on each loop: {@link #clientQueries}. */
    @Override
    public Stage stage(EventLoop loop) {
        return clientQueries();
    }

    /** The stage that logs each client's query: first in the path, so that it sees what every other stage refuses. */
    public Stage clientQueries() {
        return new Stage() {
            @Override
            public Outcome handle(Query q) {
                offerClient(DnstapSettings.Message.CLIENT_QUERY, q.message(), q.route(), q.now());
                return Outcome.CONTINUE;
            }
        };
    }

    /** A reload's dnstap section: socket, identity, version and kinds of message. */
    @Override
    public Setting.Applied part() {
        return Setting.Applied.DNSTAP;
    }

    @Override
    public void apply(Settings next) {
        reconfigure(next.dnstap());
    }

    /** A reload's socket, identity, version and kinds of message; a new socket is connected to at once. */
    public void reconfigure(DnstapSettings settings) {
        kinds = kinds(settings);
        writer.retarget(target(settings));
    }

    private static int kinds(DnstapSettings settings) {
        int mask = 0;
        for (DnstapSettings.Message m : settings.messages()) {
            mask |= 1 << m.ordinal();
        }
        return mask;
    }

    @Override
    public void clientResponse(ByteBuf message, Route route) {
        offerClient(DnstapSettings.Message.CLIENT_RESPONSE, message, route, clock.getAsLong());
    }

    @Override
    public void forwarderQuery(ByteBuf message, SocketProtocol protocol, InetSocketAddress local,
                               InetSocketAddress upstream) {
        offer(DnstapSettings.Message.FORWARDER_QUERY, protocol, local, upstream, clock.getAsLong(), message);
    }

    @Override
    public void forwarderResponse(ByteBuf message, SocketProtocol protocol, InetSocketAddress local,
                                  InetSocketAddress upstream) {
        offer(DnstapSettings.Message.FORWARDER_RESPONSE, protocol, local, upstream, clock.getAsLong(), message);
    }

    /** A message between a client and sluice, named by its route: the client a PROXY header named, if any. */
    private void offerClient(DnstapSettings.Message kind, ByteBuf message, Route route, long epochNanos) {
        offer(kind, route.protocol(), route.clientAddress(), route.serverAddress(), epochNanos, message);
    }

    /** Queues the message unless its kind is not written (a read of a volatile), or the queue is full (dropped). */
    private void offer(DnstapSettings.Message kind, SocketProtocol protocol, InetSocketAddress queryAddress,
                       InetSocketAddress responseAddress, long epochNanos, ByteBuf message) {
        if ((kinds & 1 << kind.ordinal()) == 0) {
            return;
        }
        DnstapEvent e = new DnstapEvent(kind, protocol, queryAddress, responseAddress, epochNanos,
                ByteBufUtil.getBytes(message));
        if (!queue.offer(e)) {
            dropped.increment();
        }
    }

    /** Writes out what is queued, if a reader is there, and ends the stream. */
    @Override
    public void close() throws InterruptedException {
        writer.close(2_000);
    }

    private DnstapWriter.Target target(DnstapSettings s) {
        String version = s.version() != null ? s.version() : defaultVersion;
        String identity = s.identity() != null ? s.identity() : hostName();
        return new DnstapWriter.Target(s.socket(), identity.getBytes(StandardCharsets.UTF_8),
                version.getBytes(StandardCharsets.UTF_8));
    }

    /** The host's name as the kernel has it, without a lookup in DNS (what InetAddress.getLocalHost does). */
    static String hostName() {
        try {
            String name = Files.readString(Path.of("/proc/sys/kernel/hostname")).trim();
            if (!name.isEmpty()) {
                return name;
            }
        } catch (IOException e) {
            // not Linux: the environment's, else a plain name
        }
        String env = System.getenv("HOSTNAME");
        return env != null && !env.isBlank() ? env : "sluice";
    }
}
