package io.sluice.frontend;

import io.sluice.pipeline.Pipeline;
import io.sluice.transport.DatagramBuffer;
import io.sluice.transport.Transport;
import io.sluice.transport.UdpSocket;
import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * Reads client datagrams off one loop's listening UDP sockets into its {@link Pipeline}, through
 * the loop's one {@link DatagramBuffer}: each query is handled before the next is read.
 */
final class UdpListener implements UdpSocket.Reader {
    /**
     * Largest query datagram read whole: the largest UDP payload. A smaller buffer would cut a
     * padded query or one with many options at its size and forward the fragment.
     */
    static final int MAX_UDP_QUERY_BYTES = 65535;

    private final Pipeline pipeline;
    private final ListenerMeters meters;
    private final DatagramBuffer reads = new DatagramBuffer(MAX_UDP_QUERY_BYTES);

    UdpListener(Pipeline pipeline, ListenerMeters meters) {
        this.pipeline = pipeline;
        this.meters = meters;
    }

    @Override
    public void readable(UdpSocket socket) {
        for (int i = 0; i < Transport.READS_PER_WAKEUP; i++) {
            InetSocketAddress from;
            try {
                from = reads.receive(socket);
            } catch (IOException e) {
                meters.ioErrors.increment(); // a socket error the kernel reports once: read on
                continue;
            }
            if (from == null) {
                break;
            }
            meters.queriesUdp.increment();
            pipeline.handleDatagram(reads.datagram(), socket, from);
        }
        pipeline.endOfBurst();
    }
}
