package io.sluice.dnstap;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.Queue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The thread that takes what the loops queued, encodes it and writes it to the reader's socket in
 * Frame Streams, connecting (and after a loss, reconnecting each second) as it goes. While no
 * reader is connected what is queued is dropped and counted. Blocking I/O on a thread of its own:
 * a slow reader holds this thread, never a loop, and the queue in front of it overflows into the
 * dropped count. Another thread changes where it writes, or stops it, by closing the connection
 * it may be blocked on.
 */
final class DnstapWriter implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(DnstapWriter.class);
    private static final int BUFFER_BYTES = 64 * 1024;
    /** Frames encoded before the writer looks again for a new target or a stop. */
    private static final int BATCH = 4096;
    static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);
    /**
     * How long the writer sleeps when the queue was empty, doubling from the first to the second
     * while it stays empty: the loops never wake it (a wake-up per message would be a system call
     * on the query path), so a message waits at most the second before it is written.
     */
    private static final long IDLE_MIN_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long IDLE_MAX_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** How long the end of a stream waits for the reader's FINISH. */
    private static final long FINISH_WAIT_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** Where and as whom to write. */
    record Target(Path socket, byte[] identity, byte[] version) {
    }

    private final Queue<DnstapEvent> queue;
    private final LongAdder dropped;
    private final LongAdder written;
    private final ByteBuffer out = ByteBuffer.allocate(BUFFER_BYTES);
    private final Thread thread;
    private volatile Target target;
    private volatile boolean closing;
    /** The connection, opened and used by this thread; volatile so that another can close it to wake this one. */
    private volatile SocketChannel channel;
    private volatile boolean connected;
    private Path connectedTo;
    private int framesInBuffer;
    /** The last failure logged, so that a reader away for an hour is one line, not 3,600. */
    private String lastProblem;

    DnstapWriter(Queue<DnstapEvent> queue, Target target, LongAdder dropped, LongAdder written) {
        this.queue = queue;
        this.target = target;
        this.dropped = dropped;
        this.written = written;
        this.thread = new Thread(this, "sluice-dnstap");
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    boolean connected() {
        return connected;
    }

    /** From now on writes as {@code next} says; a new socket is connected to at once. */
    void retarget(Target next) {
        Target was = target;
        target = next;
        if (!next.socket().equals(was.socket())) {
            closeQuietly(channel); // wakes the thread if it is blocked on the old reader
        }
        LockSupport.unpark(thread);
    }

    /** Writes what is queued (if a reader is connected), ends the stream and stops; waits up to {@code millis}. */
    void close(long millis) throws InterruptedException {
        closing = true;
        LockSupport.unpark(thread);
        thread.join(millis);
        if (thread.isAlive()) {
            closeQuietly(channel); // blocked on a reader that reads nothing
            thread.join(millis);
        }
    }

    @Override
    public void run() {
        long idle = IDLE_MIN_NANOS;
        while (!closing) {
            Target t = target;
            if (channel != null && !t.socket().equals(connectedTo)) {
                disconnect();
            }
            if (channel == null && !connect(t)) {
                dropQueued();
                LockSupport.parkNanos(this, RETRY_NANOS);
                continue;
            }
            if (drain(t)) {
                idle = IDLE_MIN_NANOS;
            } else {
                LockSupport.parkNanos(this, idle);
                idle = Math.min(idle * 2, IDLE_MAX_NANOS);
            }
        }
        if (channel != null) {
            while (drain(target)) {
                // what was queued before the stop
            }
            disconnect();
        }
        dropQueued();
    }

    private boolean connect(Target t) {
        SocketChannel c = null;
        try {
            c = SocketChannel.open(StandardProtocolFamily.UNIX);
            channel = c;
            c.connect(UnixDomainSocketAddress.of(t.socket()));
            FrameStreams.writeFully(c, FrameStreams.control(FrameStreams.READY));
            int reply = FrameStreams.readControl(c);
            if (reply != FrameStreams.ACCEPT) {
                throw new IOException("it answered READY with control frame " + reply + ", not ACCEPT");
            }
            FrameStreams.writeFully(c, FrameStreams.control(FrameStreams.START));
            connectedTo = t.socket();
            connected = true;
            lastProblem = null;
            LOG.info("dnstap: writing to {}", t.socket());
            return true;
        } catch (IOException | RuntimeException e) {
            closeQuietly(c);
            channel = null;
            String problem = t.socket() + ": " + e.getMessage();
            if (!closing && !problem.equals(lastProblem)) {
                lastProblem = problem;
                LOG.warn("dnstap: cannot write to {} ({}); trying again each second, and dropping messages meanwhile"
                        + " (dnstap_dropped)", t.socket(), e.getMessage());
            }
            return false;
        }
    }

    /** Encodes and writes what is queued, up to a batch; whether there was anything. */
    private boolean drain(Target t) {
        int n = 0;
        boolean inHand = false; // a message taken from the queue and not yet in the buffer
        DnstapEvent e;
        try {
            while (n < BATCH && (e = queue.poll()) != null) {
                n++;
                inHand = true;
                byte[] m = DnstapMessages.encode(e, t.identity(), t.version());
                if (out.remaining() < 4 + m.length) {
                    flush();
                }
                if (out.remaining() < 4 + m.length) { // larger than the buffer: a 64 KiB TCP answer
                    FrameStreams.writeFully(channel, ByteBuffer.allocate(4 + m.length).putInt(m.length).put(m).flip());
                    written.increment();
                } else {
                    out.putInt(m.length).put(m);
                    framesInBuffer++;
                }
                inHand = false;
            }
            flush();
        } catch (IOException | RuntimeException x) {
            if (inHand) {
                dropped.increment();
            }
            lost(x);
        }
        return n > 0;
    }

    private void flush() throws IOException {
        if (framesInBuffer == 0) {
            return;
        }
        out.flip();
        FrameStreams.writeFully(channel, out);
        out.clear();
        written.add(framesInBuffer);
        framesInBuffer = 0;
    }

    /** The connection failed under a write: what the buffer held is lost with it. */
    private void lost(Exception e) {
        if (!closing && target.socket().equals(connectedTo)) {
            lastProblem = connectedTo + ": " + e.getMessage();
            LOG.warn("dnstap: lost the reader at {} ({}); trying again each second", connectedTo, e.getMessage());
        }
        dropBuffered();
        closeConnection(channel);
    }

    /** What the buffer holds is counted as dropped, and the buffer emptied. */
    private void dropBuffered() {
        dropped.add(framesInBuffer);
        framesInBuffer = 0;
        out.clear();
    }

    private void closeConnection(SocketChannel c) {
        closeQuietly(c);
        channel = null;
        connected = false;
        connectedTo = null;
    }

    /**
     * Ends the stream with STOP and closes the connection once the reader has answered FINISH, or
     * after {@link #FINISH_WAIT_NANOS}: a reader whose FINISH meets a closed socket reports a
     * broken pipe (fstrm_capture does).
     */
    private void disconnect() {
        SocketChannel c = channel;
        try {
            flush();
            FrameStreams.writeFully(c, FrameStreams.control(FrameStreams.STOP));
            c.configureBlocking(false);
            ByteBuffer finish = ByteBuffer.allocate(12); // escape, length, FINISH
            long deadline = System.nanoTime() + FINISH_WAIT_NANOS;
            while (finish.hasRemaining() && c.read(finish) >= 0 && System.nanoTime() < deadline) {
                if (finish.hasRemaining()) {
                    LockSupport.parkNanos(this, IDLE_MIN_NANOS);
                }
            }
        } catch (IOException e) {
            dropBuffered();
        }
        closeConnection(c);
    }

    private void dropQueued() {
        int n = 0;
        while (queue.poll() != null) {
            n++;
        }
        dropped.add(n);
    }

    private static void closeQuietly(SocketChannel c) {
        if (c != null) {
            try {
                c.close();
            } catch (IOException e) {
                // closing what failed: nothing more to do
            }
        }
    }
}
