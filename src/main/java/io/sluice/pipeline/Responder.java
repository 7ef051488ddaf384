package io.sluice.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.sluice.metrics.Registry;
import io.sluice.transport.UdpSocket;
import io.sluice.wire.Answers;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.LongAdder;
import org.xbill.DNS.Rcode;

/** Writes a message to a client, batching the flushes of one wake-up (the forwarder does). */
public interface Responder {
    /**
     * Sends {@code message} (whose reference this takes) as a datagram from {@code socket} to
     * {@code address}, or framed on the TCP connection {@code client} when {@code address} is null.
     */
    void answer(Channel client, UdpSocket socket, InetSocketAddress address, ByteBuf message);

    /**
     * As {@link #answer}, for an answer its maker counts itself (an answer cache's); the same as
     * {@code answer} for a responder that counts nothing.
     */
    default void send(Channel client, UdpSocket socket, InetSocketAddress address, ByteBuf message) {
        answer(client, socket, address, message);
    }

    /**
     * The {@code answers} counters of the answers {@code source} makes (upstream, sluice, cache),
     * by the header's RCODE: the one family every maker of answers counts in.
     */
    static LongAdder[] answerCounters(Registry r, String source) {
        LongAdder[] byRcode = new LongAdder[Answers.COUNTED_RCODES];
        for (int rcode = 0; rcode < byRcode.length; rcode++) {
            byRcode[rcode] = r.counter("answers", "Answers sent to clients, by RCODE and by who made them.",
                    "rcode", Rcode.string(rcode), "source", source);
        }
        return byRcode;
    }
}
