package io.sluice.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.sluice.limit.ManualClock;
import io.sluice.metrics.Registry;
import io.sluice.pipeline.Answer;
import io.sluice.pipeline.InternalErrors;
import io.sluice.pipeline.MessageCheck;
import io.sluice.pipeline.Outcome;
import io.sluice.pipeline.Pipeline;
import io.sluice.pipeline.Query;
import io.sluice.pipeline.Stage;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;

/**
 * One loop's query path without sockets: the message check, the stages under test, and a
 * recorded upstream as the last stage, run on an embedded loop with a manual clock. A query goes
 * in as bytes, from a client address of the test's choosing; what the client would be sent comes
 * back. The recorded upstream answers from the answers the test recorded, as an upstream would
 * (the query's ID, the recorded records), back through the stages' answer sides as the forwarder's
 * answers go, and counts what reached it.
 */
public final class StageHarness {
    /** A loopback client, which the default allow-clients answers. */
    public static final InetSocketAddress CLIENT = new InetSocketAddress("127.0.0.1", 40000);

    private final EmbeddedChannel channel = new EmbeddedChannel();
    private final ManualClock clock;
    private final Map<String, Message> recorded = new HashMap<>();
    private final LongAdder internalErrors = new LongAdder();
    private final Registry metrics = new Registry();
    private final Pipeline pipeline;
    private final RecordedUpstream upstream = new RecordedUpstream();
    /** Zones under which the upstream answers NXDOMAIN for every name not recorded. */
    private final List<String> nxdomainZones = new ArrayList<>();
    private int upstreamQueries;
    private Outcome last;
    /** The upstream holds its answers ({@link #hold}) to these queries until {@link #release}. */
    private boolean holding;
    private final List<io.sluice.pipeline.ParkedQuery> held = new ArrayList<>();

    /** @param stages what runs between the message check and the recorded upstream, in order */
    public StageHarness(ManualClock clock, Stage... stages) {
        this(clock, loop -> List.of(stages));
    }

    /**
     * @param stages what runs between the message check and the recorded upstream, in order, made
     *               for the harness's loop (a stage that schedules work or parks queries needs it)
     */
    public StageHarness(ManualClock clock, Function<EventLoop, List<Stage>> stages) {
        this.clock = clock;
        List<Stage> all = new ArrayList<>();
        all.add(new MessageCheck(metrics));
        all.addAll(stages.apply(channel.eventLoop()));
        all.add(upstream);
        InternalErrors errors = new InternalErrors(internalErrors);
        pipeline = new Pipeline(channel.eventLoop(), null, all, errors, clock::epochNanos,
                Pipeline.Meters.declaredIn(metrics), null);
    }

    /** The upstream answers NXDOMAIN for every name under {@code zone} (absolute, lower case) not recorded. */
    public StageHarness nxdomainUnder(String zone) {
        nxdomainZones.add(zone);
        return this;
    }

    /** The upstream answers queries for {@code answer}'s question with its records and RCODE. */
    public StageHarness record(Message answer) {
        recorded.put(key(answer), answer.clone());
        return this;
    }

    /**
     * Runs {@code query} from {@code client} over UDP through the path, and returns what was sent
     * to the client for it, or null when nothing was (dropped, or parked and not yet answered).
     */
    public byte[] ask(byte[] query, InetSocketAddress client) {
        RecordingRoute route = send(query, client);
        if (route.sent.isEmpty()) {
            return null;
        }
        ByteBuf answer = route.sent.get(route.sent.size() - 1);
        byte[] bytes = ByteBufUtil.getBytes(answer);
        route.sent.forEach(ByteBuf::release);
        return bytes;
    }

    /**
     * Runs {@code query} from {@code client} over UDP through the path, and returns its route: what
     * was sent to the client for it, now or later ({@link #release}), is in its {@code sent}.
     */
    public RecordingRoute send(byte[] query, InetSocketAddress client) {
        RecordingRoute route = RecordingRoute.datagram(client);
        ByteBuf message = Unpooled.wrappedBuffer(query);
        try {
            last = pipeline.handle(message, route);
        } finally {
            message.release();
        }
        return route;
    }

    /** From now on the upstream keeps what reaches it, unanswered, until {@link #release}. */
    public StageHarness hold() {
        holding = true;
        return this;
    }

    /** The upstream answers what it kept, in order, and each later query at once. */
    public void release() {
        holding = false;
        List<io.sluice.pipeline.ParkedQuery> now = new ArrayList<>(held);
        held.clear();
        for (io.sluice.pipeline.ParkedQuery p : now) {
            upstream.answer(upstream.next.reopen(p));
            p.release();
        }
    }

    /** {@link #ask(byte[], InetSocketAddress)} from {@link #CLIENT}. */
    public byte[] ask(byte[] query) {
        return ask(query, CLIENT);
    }

    /** The counters of the message check, which runs first. */
    public Registry metrics() {
        return metrics;
    }

    /** How the last query's run through the stages ended. */
    public Outcome lastOutcome() {
        return last;
    }

    /** Queries that reached the recorded upstream. */
    public int upstreamQueries() {
        return upstreamQueries;
    }

    /** Bugs the pipeline caught (a stage that threw). */
    public long internalErrors() {
        return internalErrors.sum();
    }

    public ManualClock clock() {
        return clock;
    }

    private static String key(Message m) {
        Record q = m.getQuestion();
        return q.getName().toString().toLowerCase() + "/" + q.getType();
    }

    /**
     * The last stage: answers as an upstream that holds the recorded answers would, NXDOMAIN under
     * the zones named so, SERVFAIL for any other name; what it answers goes by the stages' answer sides.
     */
    private final class RecordedUpstream implements Stage {
        private Continuation next;

        @Override
        public void attach(Continuation next) {
            this.next = next;
        }

        @Override
        public Outcome handle(Query q) {
            upstreamQueries++;
            if (holding) {
                held.add(q.park());
                return Outcome.PARKED;
            }
            return answer(q);
        }

        Outcome answer(Query q) {
            Message query;
            try {
                query = new Message(ByteBufUtil.getBytes(q.message()));
            } catch (IOException e) {
                throw new IllegalStateException("the message check passed what dnsjava cannot read", e);
            }
            Message answer = recorded.get(key(query));
            String name = query.getQuestion().getName().toString().toLowerCase();
            if (answer == null && nxdomainZones.stream().anyMatch(z -> name.endsWith("." + z) || name.equals(z))) {
                answer = new Message();
                answer.getHeader().setFlag(org.xbill.DNS.Flags.QR);
                answer.getHeader().setRcode(Rcode.NXDOMAIN);
                answer.addRecord(query.getQuestion(), Section.QUESTION);
            }
            ByteBuf reply;
            if (answer == null) { // none answered: sluice's SERVFAIL, or what the cache has instead
                Message servfail = new Message(query.getHeader().getID());
                servfail.getHeader().setRcode(Rcode.SERVFAIL);
                servfail.addRecord(query.getQuestion(), Section.QUESTION);
                q.answer(Unpooled.wrappedBuffer(servfail.toWire()), Answer.Source.UPSTREAMS_FAILED);
                return Outcome.ANSWERED;
            }
            Message m = answer.clone();
            m.getHeader().setID(query.getHeader().getID());
            reply = Unpooled.wrappedBuffer(m.toWire());
            q.answer(reply, Answer.Source.UPSTREAM);
            return Outcome.ANSWERED;
        }
    }
}
