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
 * A TCP relay between its clients and one server, on 127.0.0.1, that can be partitioned: while it
 * is, no byte goes either way, though every connection stays open (as when a link between two
 * networks goes down); what was held goes on when it heals. Two threads per connection, one each
 * way.
 */
public final class StreamRelay implements AutoCloseable {
    private final ServerSocket front;
    private final InetSocketAddress server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private boolean partitioned;
    private volatile boolean closed;

    public StreamRelay(InetSocketAddress server) throws IOException {
        this.server = server;
        this.front = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::accept, "relay-accept");
        t.setDaemon(true);
        t.start();
    }

    public int port() {
        return front.getLocalPort();
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
                pump(client, upstream);
                pump(upstream, client);
            } catch (IOException e) {
                // closed, or the server refused: the client's connection is then closed by the peer's absence
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buf)) != -1; ) {
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
