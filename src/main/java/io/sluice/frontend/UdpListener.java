package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.sluice.acl.ClientRules;
import io.sluice.pipeline.Pipeline;
import io.sluice.transport.DatagramBuffer;
import io.sluice.transport.ProxyHeader;
import io.sluice.transport.Transport;
import io.sluice.transport.UdpSocket;
import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * Reads client datagrams off one loop's listening UDP sockets into its {@link Pipeline}, through
 * the loop's one {@link DatagramBuffer}: each query is handled before the next is read. A datagram
 * from a {@code proxy-protocol-from} source has its PROXY header read off first, and the client it
 * names is the query's; without a valid header it is dropped and counted, as Unbound and dnsdist
 * do: a trusted proxy that omits it is misconfigured, and the proxy is not the client.
 */
final class UdpListener implements UdpSocket.Reader {
    /**
     * Largest query datagram read whole: the largest UDP payload. A smaller buffer would cut a
     * padded query or one with many options at its size and forward the fragment.
     */
    static final int MAX_UDP_QUERY_BYTES = 65535;

    private final Pipeline pipeline;
    private final ListenerMeters meters;
    private final ClientRules rules;
    private final DatagramBuffer reads = DatagramBuffer.of(MAX_UDP_QUERY_BYTES);

    UdpListener(Pipeline pipeline, ListenerMeters meters, ClientRules rules) {
        this.pipeline = pipeline;
        this.meters = meters;
        this.rules = rules;
    }

    @Override
    public void readable(UdpSocket socket) {
        for (int i = 0; i < Transport.READS_PER_WAKEUP; i++) {
            InetSocketAddress from;
            try {
                from = reads.receive(socket, Transport.READS_PER_WAKEUP - i);
            } catch (IOException e) {
                meters.ioErrors.increment(); // a socket error the kernel reports once: read on
                continue;
            }
            if (from == null) {
                break;
            }
            ByteBuf datagram = reads.datagram();
            InetSocketAddress client = null;
            if (rules.now().speaksForClients(from.getAddress())) {
                int header = ProxyHeader.length(datagram);
                if (header <= 0) { // incomplete too: a datagram holds its whole header or none
                    meters.proxyHeaderInvalid.increment();
                    continue;
                }
                client = ProxyHeader.source(datagram);
                datagram.skipBytes(header);
            }
            meters.queriesUdp.increment();
            pipeline.handle(datagram, new DatagramRoute(pipeline.writes(), socket, from, client));
        }
        pipeline.endOfBurst();
    }
}
