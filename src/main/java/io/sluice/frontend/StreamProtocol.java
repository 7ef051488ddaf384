package io.sluice.frontend;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import io.sluice.pipeline.Pipeline;
import io.sluice.transport.ConnectionBounds;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.LongAdder;

/**
 * A protocol that a front end speaks on TLS connections the frontend accepts for it
 * ({@link Frontend#bindTls}): DNS messages framed as over TCP (DNS over TLS,
 * {@link Frontend#dnsMessages}), or HTTP (DNS over HTTPS). The frontend holds each connection to
 * the bounds every TCP listener shares (connections in all and per client, their rate), reads a
 * proxy's PROXY header, puts it in TLS, and then hands it over here.
 */
@FunctionalInterface
public interface StreamProtocol {
    /** What a connection of the protocol counts: its queries, failed handshakes, idle closes and socket errors. */
    record Meters(LongAdder queries, LongAdder handshakeFailed, LongAdder idleClosed, LongAdder ioErrors) {
    }

    /**
     * Sets up {@code ch}, in TLS, to hand its queries to {@code pipeline}, its loop's.
     *
     * @param proxied where the client a PROXY header named is noted, if any
     * @return what winds the connection down when the listeners stop: no request more, those taken
     *         answered, then the close; null when its handlers heed the stop themselves
     */
    Runnable setUp(Channel ch, Pipeline pipeline, ConnectionBounds bounds, AttributeKey<InetSocketAddress> proxied,
                   Meters meters);
}
