package io.sluice.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.sluice.transport.Transport;
import io.sluice.transport.UdpSocket;
import io.sluice.wire.Answers;
import io.sluice.wire.QueryView;
import io.sluice.wire.Wire;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.function.LongSupplier;

/**
 * The query a pipeline is running: its message, what the first stage read of it, and its client.
 * One per pipeline (and one more for resumed queries), refilled for every message: no object per
 * query. Valid only while the stages run; a stage that keeps a query keeps a {@link #park() copy}.
 */
public final class Query {
    private final QueryView view = new QueryView();
    private final Responder responder;
    private final LongSupplier clock;
    private ByteBuf message;
    private Channel client;
    private UdpSocket socket;
    private InetSocketAddress address;
    /** The client a PROXY header named, or null: the peer is the client. */
    private InetAddress proxied;
    /** Its answers go to no one: a cache's prefetch, answered from the cache already. */
    private boolean answersNobody;
    private long now;
    private boolean timed;
    private long answerNote;

    Query(Responder responder, LongSupplier clock) {
        this.responder = responder;
        this.clock = clock;
    }

    void set(ByteBuf message, Channel client, UdpSocket socket, InetSocketAddress address, InetAddress proxied) {
        this.message = message;
        this.client = client;
        this.socket = socket;
        this.address = address;
        this.proxied = proxied;
        this.answersNobody = false;
        this.timed = false;
        this.answerNote = UpstreamReplies.NO_NOTE;
    }

    /**
     * The query's time on the limiters' clock (epoch nanoseconds), read when a stage first asks:
     * the cache and the limits then judge it at one instant, and a query pays one clock read. A
     * read costs 25-50 ns on the benchmark machines, its fence included, which is a tenth of a
     * decision (docs/benchmarks.md, "Decision (JMH)").
     */
    public long now() {
        if (!timed) {
            now = clock.getAsLong();
            timed = true;
        }
        return now;
    }

    /**
     * What a stage noted of this query for what sees the upstream's answer to it
     * ({@link UpstreamReplies#answered}), carried with the query by the forwarder, which knows
     * nothing of it, and with a parked copy; {@link UpstreamReplies#NO_NOTE} unless a stage set it.
     */
    public long answerNote() {
        return answerNote;
    }

    public void answerNote(long note) {
        answerNote = note;
    }

    /** The client's bytes, between reader and writer index; the caller of the pipeline owns them. */
    public ByteBuf message() {
        return message;
    }

    /** What was read of the message; filled by the first stage. */
    public QueryView view() {
        return view;
    }

    /** The client's TCP connection, or null for a query that came in a datagram. */
    public Channel client() {
        return client;
    }

    /** The socket the query's datagram came in on, which its answer leaves from; null over TCP. */
    public UdpSocket udpSocket() {
        return socket;
    }

    /**
     * Where a datagram's answer goes: the UDP client's address, or its proxy's; null when
     * {@link #client} is a TCP connection.
     */
    public InetSocketAddress udpAddress() {
        return address;
    }

    public boolean overUdp() {
        return address != null;
    }

    /**
     * The client's IP address, over either transport: the one its proxy's PROXY header named, or
     * the peer's. What the client rules, the exemptions and per-client budgets judge.
     */
    public InetAddress clientIp() {
        if (proxied != null) {
            return proxied;
        }
        InetSocketAddress from = address != null ? address : (InetSocketAddress) client.remoteAddress();
        return from.getAddress();
    }

    /**
     * From now on, its answers go to no one: the cache has answered the client and sends the query
     * on to refresh its answer (a prefetch). The stages after judge it as ever, for its client.
     */
    public void answerNobody() {
        answersNobody = true;
    }

    /** Whether its answers go to no one ({@link #answerNobody}). */
    public boolean answersNobody() {
        return answersNobody;
    }

    /** Sends {@code answer} (whose reference this takes) to the client. */
    public void answer(ByteBuf answer) {
        if (answersNobody) {
            answer.release();
            return;
        }
        responder.answer(client, socket, address, answer);
    }

    /** Sends {@code answer} (whose reference this takes), which the caller has counted, to the client. */
    public void send(ByteBuf answer) {
        if (answersNobody) {
            answer.release();
            return;
        }
        responder.send(client, socket, address, answer);
    }

    /**
     * Answers with the question echoed, {@code rcode}, header flags {@code flags} (RA, TC) and no
     * records; with an OPT (and an Extended DNS Error when {@code text} is set) if the query had one.
     */
    public void answerWithQuestion(int flags, int rcode, int edeCode, byte[] text) {
        answer(Answers.withQuestion(Transport.ALLOCATOR, message, view, flags, rcode, edeCode, text));
    }

    /** {@link #answerWithQuestion}, the text being {@code text[0, textLength)}: a buffer reused per query. */
    public void answerWithQuestion(int flags, int rcode, int edeCode, byte[] text, int textLength) {
        answer(Answers.withQuestion(Transport.ALLOCATOR, message, view, flags, rcode, edeCode, text, textLength));
    }

    /** A copy of this query to keep past the stages' run. */
    public ParkedQuery park() {
        ByteBuf copy = Transport.ALLOCATOR.buffer(message.readableBytes())
                .writeBytes(message, message.readerIndex(), message.readableBytes());
        return new ParkedQuery(copy, client, socket, address, proxied, answersNobody, answerNote);
    }

    /**
     * Tells the client's connection that a query it was told would be answered ({@link Outcome#PARKED})
     * never will be: a TCP connection counts the answers it owes.
     */
    public void droppedAfterParking() {
        if (address == null && !answersNobody) {
            client.pipeline().fireUserEventTriggered(
                    new DroppedQuery(message.getUnsignedShort(message.readerIndex() + Wire.ID_OFFSET)));
        }
    }
}
