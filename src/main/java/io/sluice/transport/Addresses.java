package io.sluice.transport;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;

/** How socket addresses are written in logs and messages: {@code 127.0.0.1:53}, {@code [::1]:53}. */
public final class Addresses {
    private Addresses() {
    }

    public static String text(InetSocketAddress a) {
        String host = a.getAddress() == null ? a.getHostString() : a.getAddress().getHostAddress();
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort();
    }

    /** What a listener that could not bind {@code at} says: {@code 127.0.0.1:8080/http (admin): Address already in use}. */
    public static BindException bindFailure(InetSocketAddress at, String what, IOException cause) {
        BindException b = new BindException(text(at) + "/" + what + ": " + cause.getMessage());
        b.initCause(cause);
        return b;
    }
}
