package io.sluice.forward;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.sluice.pipeline.Outcome;
import io.sluice.pipeline.Query;
import io.sluice.pipeline.Responder;
import io.sluice.pipeline.Stage;
import io.sluice.transport.UdpSocket;
import java.net.InetSocketAddress;

/**
 * The last stage: the query goes to its loop's {@link Forwarder}, which answers it in all cases.
 * It also writes the answers the other stages make, through the same forwarder's write batch. A
 * reload may hand it the forwarder of a new generation ({@link Forwarders}); only its loop's
 * thread reads or changes which.
 */
public final class ForwardStage implements Stage, Responder {
    private Forwarder forwarder;

    public ForwardStage(Forwarder forwarder) {
        this.forwarder = forwarder;
    }

    @Override
    public Outcome handle(Query q) {
        if (q.answersNobody()) { // a prefetch: the answer is the cache's alone
            forwarder.forward(q.message(), q.view(), null, null, null, !q.overUdp(), q.answerNote());
        } else {
            forwarder.forward(q.message(), q.view(), q.client(), q.udpSocket(), q.udpAddress(), !q.overUdp(),
                    q.answerNote());
        }
        return Outcome.ANSWERED;
    }

    @Override
    public void answer(Channel client, UdpSocket socket, InetSocketAddress clientAddress, ByteBuf message) {
        forwarder.answer(client, socket, clientAddress, message);
    }

    @Override
    public void send(Channel client, UdpSocket socket, InetSocketAddress clientAddress, ByteBuf message) {
        forwarder.send(client, socket, clientAddress, message);
    }

    /** From now on queries go to {@code next}, which must be of this stage's loop; call on that loop. */
    public void switchTo(Forwarder next) {
        if (!next.loop().inEventLoop()) {
            throw new IllegalStateException("a forward stage switches on its own loop");
        }
        forwarder = next;
    }
}
