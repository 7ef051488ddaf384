package io.sluice.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.sluice.transport.UdpSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The query path of one event loop: its stages in order, fixed at start. The front end hands it
 * every message and the end of every read burst, and knows nothing of what the stages do; only
 * where the pipelines are assembled ({@code io.sluice.Sluice}) says which stages run, in which order.
 *
 * <p>The last stage must never {@link Outcome#CONTINUE}: a query that passes every stage would
 * otherwise get no answer.
 */
public final class Pipeline {
    private final EventLoop loop;
    private final Stage[] stages;
    private final Query current;
    private final Query resumed;
    private final InternalErrors errors;

    /** @param clock the limiters' and the cache's clock, epoch nanoseconds: each query's {@link Query#now} */
    public Pipeline(EventLoop loop, Responder responder, List<Stage> stages, InternalErrors errors, LongSupplier clock) {
        this.loop = loop;
        this.errors = errors;
        this.stages = stages.toArray(new Stage[0]);
        this.current = new Query(responder, clock);
        this.resumed = new Query(responder, clock);
        for (int i = 0; i < this.stages.length; i++) {
            this.stages[i].attach(new After(i + 1));
        }
    }

    /**
     * The answer sides of {@code stages} ({@link Stage#answers}), the last stage's first, each
     * guarded so that a bug in one costs neither the answer nor the others: what the forwarder of
     * their loop hands every upstream answer to.
     */
    public static UpstreamReplies answersOf(List<Stage> stages, InternalErrors errors) {
        List<UpstreamReplies> back = new ArrayList<>();
        for (int i = stages.size() - 1; i >= 0; i--) {
            UpstreamReplies answers = stages.get(i).answers();
            if (answers != null) {
                back.add(GuardedReplies.of(answers, errors));
            }
        }
        return UpstreamReplies.of(back);
    }

    /**
     * Runs one datagram from {@code sender}, read off {@code socket}, through the stages; the
     * caller keeps and releases it.
     *
     * @param proxied the client a PROXY header named, or null when {@code sender} is the client
     */
    public Outcome handleDatagram(ByteBuf message, UdpSocket socket, InetSocketAddress sender, InetAddress proxied) {
        current.set(message, null, socket, sender, proxied);
        return run(current);
    }

    /**
     * Runs one message from the TCP connection {@code client} through the stages; the caller keeps
     * and releases it.
     *
     * @param proxied the client the connection's PROXY header named, or null when the peer is the client
     */
    public Outcome handleTcp(ByteBuf message, Channel client, InetAddress proxied) {
        current.set(message, client, null, null, proxied);
        return run(current);
    }

    private Outcome run(Query current) {
        try {
            return run(current, 0);
        } catch (RuntimeException e) {
            // A bug met by this message: it is dropped, as a lost datagram (the client asks again),
            // and the loop reads on; uncaught, it would end this read and, over TCP, the connection.
            errors.caught(stageName(e), "a client's query", "the query is dropped", e);
            return Outcome.DROPPED;
        }
    }

    private Outcome run(Query q, int from) {
        for (int i = from; i < stages.length; i++) {
            Outcome o = stages[i].handle(q);
            if (o != Outcome.CONTINUE) {
                return o;
            }
        }
        throw new IllegalStateException("the last stage passed a query on");
    }

    /** The end of a read burst: each stage may send what it parked. */
    public void endOfBurst() {
        for (Stage s : stages) {
            try {
                s.endOfBurst();
            } catch (RuntimeException e) {
                errors.caught(InternalErrors.nameOf(s), "the end of a read burst", "the next stage goes on", e);
            }
        }
    }

    /** The stage a stack's top frames name, for the log line. */
    private String stageName(RuntimeException e) {
        for (StackTraceElement frame : e.getStackTrace()) {
            for (Stage s : stages) {
                if (frame.getClassName().equals(s.getClass().getName())) {
                    return InternalErrors.nameOf(s);
                }
            }
        }
        return "the query path";
    }

    /** Queries parked in the stages; call on the loop. */
    public int parked() {
        int n = 0;
        for (Stage s : stages) {
            n += s.parked();
        }
        return n;
    }

    public EventLoop loop() {
        return loop;
    }

    /** Queries parked now in {@code pipelines}, each counted on its loop; from outside the loops. */
    public static int parkedIn(List<Pipeline> pipelines) {
        int n = 0;
        for (Pipeline p : pipelines) {
            n += OnLoop.count(p.loop(), p::parked);
        }
        return n;
    }

    private final class After implements Stage.Continuation {
        private final int from;

        After(int from) {
            this.from = from;
        }

        @Override
        public Query reopen(ParkedQuery parked) {
            resumed.set(parked.message(), parked.client(), parked.socket(), parked.address(), parked.proxied());
            resumed.answerNote(parked.answerNote());
            if (parked.answersNobody()) {
                resumed.answerNobody();
            }
            resumed.view().read(parked.message()); // a parked query was read whole before: it reads the same
            return resumed;
        }

        @Override
        public Outcome overBudget(Query q) {
            for (int i = from - 2; i >= 0; i--) { // from - 1 is the stage that asks
                Outcome o = stages[i].overBudget(q);
                if (o != Outcome.CONTINUE) {
                    return o;
                }
            }
            return Outcome.CONTINUE;
        }

        @Override
        public Outcome proceed(Query q) {
            try {
                return run(q, from);
            } catch (RuntimeException e) {
                errors.caught(stageName(e), "a resumed query", "the query is dropped", e);
                q.droppedAfterParking();
                return Outcome.DROPPED;
            }
        }
    }
}
