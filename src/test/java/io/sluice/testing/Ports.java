package io.sluice.testing;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.ServerSocket;

/** Free loopback ports for servers the tests start. */
public final class Ports {
    private Ports() {
    }

    /** A loopback port free for both UDP and TCP when probed (it can be taken before use). */
    public static int freeUdpAndTcp() throws IOException {
        while (true) {
            try (DatagramSocket udp = new DatagramSocket(0, InetAddress.getLoopbackAddress());
                 ServerSocket tcp = new ServerSocket(udp.getLocalPort(), 1, InetAddress.getLoopbackAddress())) {
                return tcp.getLocalPort();
            } catch (IOException taken) {
                // the TCP side of that port is in use: draw another
            }
        }
    }
}
