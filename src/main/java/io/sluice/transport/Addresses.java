package io.sluice.transport;

import java.net.InetSocketAddress;

/** How socket addresses are written in logs and messages: {@code 127.0.0.1:53}, {@code [::1]:53}. */
public final class Addresses {
    private Addresses() {
    }

    public static String text(InetSocketAddress a) {
        String host = a.getAddress() == null ? a.getHostString() : a.getAddress().getHostAddress();
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort();
    }
}
