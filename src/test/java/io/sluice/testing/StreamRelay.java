package io.sluice.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP relay between its clients and one server, on 127.0.0.1, that delays or holds what it
 * passes: the network fault between sluice and Redis (or a TCP upstream), made with sockets. A
 * stream loses nothing: what a lossy or broken link costs TCP is time, so each chunk read one way
 * goes on after the delay its {@link DatagramRelay.Fault} gives (in order), and while the fault
 * says "lost" it is held, and asked again each millisecond. While {@link #partition partitioned},
 * nothing goes either way, though every connection stays open. Two threads per connection, one
 * each way.
 */
public final class StreamRelay implements AutoCloseable {
    private final ServerSocket front;
    private final InetSocketAddress server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private boolean partitioned;
    private volatile DatagramRelay.Fault toServer = DatagramRelay.NONE;
    private volatile DatagramRelay.Fault toClient = DatagramRelay.NONE;
    private volatile boolean closed;

    public StreamRelay(InetSocketAddress server) throws IOException {
        this(server, 0);
    }

    /** Listens on {@code port} of 127.0.0.1 (0 for any): a datagram relay's port number, say, so that one address serves both. */
    public StreamRelay(InetSocketAddress server, int port) throws IOException {
        this.server = server;
        this.front = new ServerSocket(port, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::accept, "relay-accept");
        t.setDaemon(true);
        t.start();
    }

    public int port() {
        return front.getLocalPort();
    }

    /** From now on, what goes to the server and back meets these faults. */
    public void faults(DatagramRelay.Fault toServer, DatagramRelay.Fault toClient) {
        this.toServer = toServer;
        this.toClient = toClient;
    }

    /** Cuts both ways ({@code true}) or heals ({@code false}). */
    public void partition(boolean cut) {
        synchronized (gate) {
            partitioned = cut;
            gate.notifyAll();
        }
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = front.accept();
                Socket upstream = new Socket(server.getAddress(), server.getPort());
                for (Socket s : List.of(client, upstream)) {
                    s.setTcpNoDelay(true);
                    sockets.add(s);
                }
                pump(client, upstream, true);
                pump(upstream, client, false);
            } catch (IOException e) {
                // closed, or the server refused: the client's connection is then closed by the peer's absence
            }
        }
    }

    private void pump(Socket from, Socket to, boolean serverward) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int chunk = 0;
                for (int n; (n = in.read(buf)) != -1; ) {
                    chunk++;
                    for (long delay; (delay = (serverward ? toServer : toClient).delayMillis(chunk)) != 0; ) {
                        Thread.sleep(delay < 0 ? 1 : delay);
                        if (delay > 0) {
                            break;
                        }
                    }
                    waitWhilePartitioned();
                    out.write(buf, 0, n);
                }
            } catch (IOException | InterruptedException e) {
                // one side went: the other goes with it
            } finally {
                close(from);
                close(to);
            }
        }, "relay-pump");
        t.setDaemon(true);
        t.start();
    }

    private void waitWhilePartitioned() throws InterruptedException {
        synchronized (gate) {
            while (partitioned && !closed) {
                gate.wait();
            }
        }
    }

    private static void close(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        partition(false);
        front.close();
        sockets.forEach(StreamRelay::close);
    }
}
