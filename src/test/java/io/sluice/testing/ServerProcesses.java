package io.sluice.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/** What the tests' real DNS servers (nsd, dnsdist) share: waiting for the first answer, and the stop. */
final class ServerProcesses {
    private ServerProcesses() {
    }

    /**
     * Asks {@code query} over UDP until {@code p} answers at {@code at} (true) or exits or 15 s
     * pass (false): a port free when probed may be taken before the server binds it.
     */
    static boolean answers(Process p, InetSocketAddress at, byte[] query) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (System.nanoTime() < deadline && p.isAlive()) {
            if (Dns.udp(at, query, 200) != null) {
                return true;
            }
        }
        return false;
    }

    /** SIGTERM, then SIGKILL if it has not exited within 10 s. */
    static void stop(Process p) throws InterruptedException {
        p.destroy();
        if (!p.waitFor(10, TimeUnit.SECONDS)) {
            p.destroyForcibly();
        }
    }
}
