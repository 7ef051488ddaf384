package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.forward.TransferPart;
import io.sluice.pipeline.Pipeline;
import io.sluice.transport.ConnectionBounds;
import io.sluice.transport.SocketProtocol;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * One client connection. It counts the answers it owes, so that a client that sends its
 * queries and then half-closes (shutdown(SHUT_WR), as some tools do) gets them before the
 * close; messages of a zone transfer come as {@link TransferPart}s until its last, so that a
 * transfer is owed as one answer.
 *
 * <p>What a connection holds is bounded whatever its client does. A query is handled only
 * while the connection owes fewer than {@value #MAX_OWED} answers and has at most
 * {@value #MAX_BACKLOG_BYTES} bytes waiting to be written; a query read past that waits, as
 * its bytes, with the rest of its read, and nothing more is read, until the client has read
 * enough. So a client that asks and never reads holds a read of queries and about a MiB of
 * answers, and once nothing is owed the idle timeout closes it. A read holds many small
 * queries, each of which may have a large answer: hence the bytes, not only the count.
 */
final class TcpConnection extends ChannelDuplexHandler {
    static final int MAX_OWED = 1000;
    static final long MAX_BACKLOG_BYTES = 1 << 20;
    /**
     * How long a close waits for the loop's next reads ({@link #closeIfDone}): a task scheduled
     * past this turn of the loop runs only after its next I/O.
     */
    static final long CLOSE_AFTER_READS_MILLIS = 1;

    private final Pipeline pipeline;
    private final ListenerMeters meters;
    /** Where its queries are counted: over TCP or over TLS. */
    private final LongAdder queriesCounter;
    private final ConnectionBounds bounds;
    private final SocketProtocol protocol;
    /** Made at the first query, once a proxy's PROXY header has named the client. */
    private ConnectionRoute route;
    private int owed;
    /** A bound (queries, duration) was reached: no query is handled any more. */
    private boolean boundReached;
    /** The client half-closed: what it sent is answered, then the connection closed. */
    private boolean inputShutdown;
    /** Queries read while there was no room to answer them, in order. */
    private final ArrayDeque<ByteBuf> waiting = new ArrayDeque<>();
    private boolean drainQueued;
    /** The listener is shutting down ({@link TcpListener#STOP_READING}): no query more is taken. */
    private boolean stopped;
    /** The close is under way: asked for once. */
    private boolean closing;
    /** What {@link #readIfRoom} last set the channel's auto-read to. */
    private boolean reading = true;
    private int queries;
    private long openedNanos;
    /** The last whole query read or answer written: what the idle timeout counts from. */
    private long lastActivityNanos;
    private ScheduledFuture<?> check;

    TcpConnection(Pipeline pipeline, ListenerMeters meters, LongAdder queriesCounter, ConnectionBounds bounds,
               SocketProtocol protocol) {
        this.pipeline = pipeline;
        this.protocol = protocol;
        this.meters = meters;
        this.queriesCounter = queriesCounter;
        this.bounds = bounds;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        openedNanos = System.nanoTime();
        lastActivityNanos = openedNanos;
        long every = bounds.checkNanos();
        check = ctx.executor().scheduleAtFixedRate(() -> checkBounds(ctx), every, every, TimeUnit.NANOSECONDS);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        check.cancel(false);
        releaseWaiting();
        ctx.fireChannelInactive();
    }

    private void releaseWaiting() {
        for (ByteBuf b; (b = waiting.poll()) != null; ) {
            b.release();
        }
    }

    /**
     * Idle means no whole query and nothing owed for the idle timeout: a client waiting for an
     * answer, or taking a zone transfer, sends nothing meanwhile, and the forwarder's deadlines
     * bound that wait; a client trickling a frame a byte at a time never completes one, and
     * one that does not read its answers is written nothing more.
     */
    private void checkBounds(ChannelHandlerContext ctx) {
        long now = System.nanoTime();
        if (owed <= 0 && now - lastActivityNanos >= bounds.idleNanos()) {
            meters.tcpIdleClosed.increment();
            ctx.close();
        } else if (now - openedNanos >= bounds.maxDurationNanos()) {
            reachBound(ctx);
        }
    }

    /** Handles no query more, not even one waiting; closes once every answer owed is written. */
    private void reachBound(ChannelHandlerContext ctx) {
        boundReached = true;
        releaseWaiting();
        readIfRoom(ctx);
        closeIfDone(ctx);
    }

    private void closeIfDone(ChannelHandlerContext ctx) {
        if ((boundReached || inputShutdown || stopped) && owed <= 0 && waiting.isEmpty() && !closing) {
            closing = true;
            // After the loop's next reads, not now: a stop turns reading back on to discard what
            // the client sent, and that read happens in the loop's I/O, after this task. Closed
            // before it, with the client's bytes unread, the connection is reset, and the reset
            // discards the answers still in the kernel's send buffer: the client got none.
            ctx.executor().schedule(() -> closeWhenWritten(ctx), CLOSE_AFTER_READS_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** Whether a query may be handled now: few enough answers owed, and not too many bytes of them waiting. */
    private boolean roomToAnswer(ChannelHandlerContext ctx) {
        return owed < MAX_OWED && ctx.channel().bytesBeforeWritable() <= MAX_BACKLOG_BYTES;
    }

    /**
     * Reads while it takes queries, none waits, fewer than {@link #MAX_OWED} are owed, and writes
     * do not back up. Once stopped it reads again, to discard: a close with the client's bytes
     * unread is sent as RST, and a RST discards the answers still in the kernel's send buffer.
     */
    private void readIfRoom(ChannelHandlerContext ctx) {
        boolean read = !inputShutdown && (stopped || (!boundReached && waiting.isEmpty() && owed < MAX_OWED
                && ctx.channel().isWritable()));
        if (read != reading) {
            reading = read;
            ctx.channel().config().setAutoRead(read);
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf frame = (ByteBuf) msg;
        if (!ctx.channel().isActive() || boundReached || stopped) {
            frame.release(); // closed, a bound reached by a message before this one of the same read, or stopping
            return;
        }
        if (!waiting.isEmpty() || !roomToAnswer(ctx)) {
            waiting.add(frame); // nothing more is read (readIfRoom): at most the rest of this read waits
        } else {
            try {
                handle(ctx, frame);
            } finally {
                frame.release();
            }
        }
        readIfRoom(ctx);
    }

    private void handle(ChannelHandlerContext ctx, ByteBuf frame) {
        queriesCounter.increment();
        lastActivityNanos = System.nanoTime();
        owed++; // before: an answer written at once, inside handle, is counted off against it
        if (route == null) {
            route = new ConnectionRoute(ctx.channel(), protocol, ctx.channel().attr(TcpListener.PROXIED).get(),
                    Boolean.TRUE.equals(ctx.channel().attr(TcpListener.PROXIED_DATAGRAMS).get()), pipeline.writes());
        }
        switch (pipeline.handle(frame, route)) {
            case ANSWERED, PARKED -> { }
            case NOT_A_QUERY -> {
                owed--;
                ctx.close(); // not a DNS client: nothing to wait for, as nsd resets
            }
            default -> owed--; // dropped: nothing owed
        }
        if (bounds.maxQueries() > 0 && ++queries >= bounds.maxQueries()) {
            reachBound(ctx);
        }
    }

    /**
     * Handles the queries that waited, as room allows, from a task of its own: the room comes
     * back inside a write, which a handled query may itself be making.
     */
    private void drainLater(ChannelHandlerContext ctx) {
        if (!waiting.isEmpty() && !drainQueued) {
            drainQueued = true;
            ctx.executor().execute(() -> drain(ctx));
        }
    }

    private void drain(ChannelHandlerContext ctx) {
        drainQueued = false;
        try {
            boolean handled = false;
            while (!waiting.isEmpty() && ctx.channel().isActive() && !boundReached && roomToAnswer(ctx)) {
                ByteBuf frame = waiting.poll();
                try {
                    handle(ctx, frame);
                    handled = true;
                } finally {
                    frame.release();
                }
            }
            if (handled) {
                pipeline.endOfBurst();
            }
            readIfRoom(ctx);
            closeIfDone(ctx);
        } catch (RuntimeException e) {
            exceptionCaught(ctx, e); // a task of its own: nothing else would see it
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        drainLater(ctx);
        readIfRoom(ctx);
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof TransferPart part) {
            ctx.write(part.content(), promise);
            return;
        }
        owed--;
        lastActivityNanos = System.nanoTime();
        ctx.write(msg, promise);
        answeredOne(ctx);
    }

    /** One answer fewer owed: the close, if winding down, or room for what waits. */
    private void answeredOne(ChannelHandlerContext ctx) {
        closeIfDone(ctx);
        drainLater(ctx);
        readIfRoom(ctx);
    }

    /**
     * Closes once everything written so far has reached the socket: a close at once would
     * discard answers not yet flushed (they are flushed at the end of the loop's wake-up). The
     * empty buffer goes in below the length prepender, so that no empty frame is sent.
     */
    private static void closeWhenWritten(ChannelHandlerContext ctx) {
        ctx.pipeline().firstContext().writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        pipeline.endOfBurst();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt == TcpListener.STOP_READING) {
            stopped = true;
            readIfRoom(ctx);
            closeIfDone(ctx);
        } else if (evt instanceof ChannelInputShutdownEvent) {
            inputShutdown = true;
            readIfRoom(ctx);
            closeIfDone(ctx);
        } else if (evt instanceof SslHandshakeCompletionEvent h && !h.isSuccess()) {
            meters.tlsHandshakeFailed.increment(); // the SslHandler closes the connection
        } else if (evt == ConnectionRoute.QUERY_DROPPED) { // a parked query, dropped after all
            owed--;
            answeredOne(ctx);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        meters.ioErrors.increment(); // reset by peer and the like: close quietly
        ctx.close();
    }
}
