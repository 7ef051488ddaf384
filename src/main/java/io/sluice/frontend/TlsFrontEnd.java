package io.sluice.frontend;

import io.sluice.config.Settings;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * A front end that a module binds on TLS connections through the frontend's listeners
 * ({@link Frontend#bindTls}): DNS over TLS, DNS over HTTPS. The server keeps a list of them and
 * binds each after UDP and TCP, before any listener reads.
 */
@FunctionalInterface
public interface TlsFrontEnd {
    /**
     * Binds the addresses its settings name; they read from the frontend's start of reading on.
     *
     * @return the addresses bound, ports resolved; empty when its settings name none
     */
    List<InetSocketAddress> bind(Settings settings, Frontend frontend) throws BindException, InterruptedException;
}
