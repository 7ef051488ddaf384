package io.sluice.posix;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.unix.Socket;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Tells the service manager how the service stands (sd_notify(3)): a datagram such as
 * {@code READY=1} to the unix socket {@code $NOTIFY_SOCKET}, which systemd sets for a
 * {@code Type=notify} unit. Without the variable it does nothing, as sd_notify does. The socket is
 * a datagram one, which the JDK cannot open; Netty's native transport, which sluice runs on
 * already, can. A name starting with {@code @} is in the abstract namespace.
 */
public final class SystemdNotify {
    private SystemdNotify() {
    }

    /**
     * Sends {@code state} ({@code READY=1}, {@code STOPPING=1}, ...) to {@code $NOTIFY_SOCKET}.
     *
     * @return false when there is no such variable; true when the datagram was sent
     * @throws IOException when it could not be (no native transport, the socket is gone)
     */
    public static boolean send(String state) throws IOException {
        String target = System.getenv("NOTIFY_SOCKET");
        if (target == null || target.isEmpty()) {
            return false;
        }
        if (!Epoll.isAvailable()) {
            throw new IOException("the native transport that writes to it is not available ("
                    + Epoll.unavailabilityCause() + "): run the unit as Type=exec on this host");
        }
        byte[] path = (target.charAt(0) == '@' ? '\0' + target.substring(1) : target).getBytes(StandardCharsets.UTF_8);
        byte[] bytes = state.getBytes(StandardCharsets.UTF_8);
        ByteBuf message = Unpooled.directBuffer(bytes.length).writeBytes(bytes);
        try {
            Socket socket = Socket.newSocketDomainDgram();
            try {
                socket.sendToDomainSocket(message.nioBuffer(), 0, bytes.length, path);
                return true;
            } finally {
                socket.close();
            }
        } catch (RuntimeException e) { // Netty's ChannelException: no socket to be had
            throw new IOException(e.getMessage(), e);
        } finally {
            message.release();
        }
    }
}
