package io.sluice.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.sluice.transport.SocketProtocol;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * A route a stage wraps around a query's ({@link Query#reroute}), as CoreDNS's plugins wrap the
 * ResponseWriter, to know its answer on the way back among others' or to carry what the answer
 * owes its client: every method is the wrapped route's, but what a subclass changes.
 */
public abstract class WrappedRoute implements Route {
    /** The route this one wraps. */
    @Override
    public abstract Route wrapped();

    /**
     * The route of {@code type} among {@code r} and the routes it wraps, or null: how a stage
     * finds its own wrapper on the way back, whatever stages wrapped theirs around it.
     */
    public static <T extends WrappedRoute> T find(Route r, Class<T> type) {
        for (; r != null; r = r.wrapped()) {
            if (type.isInstance(r)) {
                return type.cast(r);
            }
        }
        return null;
    }

    @Override
    public void send(ByteBuf answer) {
        wrapped().send(answer);
    }

    @Override
    public InetAddress clientIp() {
        return wrapped().clientIp();
    }

    @Override
    public boolean datagram() {
        return wrapped().datagram();
    }

    @Override
    public SocketProtocol protocol() {
        return wrapped().protocol();
    }

    @Override
    public InetSocketAddress clientAddress() {
        return wrapped().clientAddress();
    }

    @Override
    public InetSocketAddress serverAddress() {
        return wrapped().serverAddress();
    }

    @Override
    public boolean verified() {
        return wrapped().verified();
    }

    @Override
    public boolean answersSomebody() {
        return wrapped().answersSomebody();
    }

    @Override
    public void dropped(ByteBuf query) {
        wrapped().dropped(query);
    }

    @Override
    public Channel connection() {
        return wrapped().connection();
    }
}
