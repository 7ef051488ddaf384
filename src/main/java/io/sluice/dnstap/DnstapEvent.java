package io.sluice.dnstap;

import io.sluice.config.DnstapSettings;
import io.sluice.transport.SocketProtocol;
import java.net.InetSocketAddress;

/**
 * One message as a loop saw it, waiting in the queue for the writer: what a loop pays per message
 * is this object and the copy of the message's bytes; the writer does the encoding.
 *
 * @param kind            which of a forwarder's four dnstap messages it is
 * @param queryAddress    the address of the side that sent the query: the client, or sluice to an
 *                        upstream; null when not known
 * @param responseAddress the side that answers it: sluice to a client, or the upstream
 * @param epochNanos      when it was read or sent
 * @param message         the DNS message's bytes
 */
record DnstapEvent(DnstapSettings.Message kind, SocketProtocol protocol, InetSocketAddress queryAddress,
                   InetSocketAddress responseAddress, long epochNanos, byte[] message) {
}
