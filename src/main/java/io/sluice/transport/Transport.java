package io.sluice.transport;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFactory;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoEvent;
import io.netty.channel.IoHandle;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoOps;
import io.netty.channel.IoRegistration;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollIoHandle;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.nio.NioIoOps;
import io.netty.channel.nio.NioSelectableChannelIoHandle;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.SocketProtocolFamily;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.unix.FileDescriptor;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.nio.channels.SelectionKey;

/**
 * Native epoll when the platform has it, NIO otherwise: the event loops, the TCP channels, and how
 * a loop watches a {@link UdpSocket}. Only on Linux does each event loop get its own UDP socket on
 * one port (SO_REUSEPORT shares datagrams out there), so {@link #reusePort()} tells the front end
 * whether it can.
 */
public enum Transport {
    EPOLL {
        @Override
        public DatagramChannel datagram(SocketProtocolFamily family) {
            return new EpollDatagramChannel(family);
        }

        @Override
        IoHandlerFactory ioHandler() {
            return EpollIoHandler.newFactory();
        }

        @Override
        IoHandle readHandle(java.nio.channels.DatagramChannel channel, Runnable readable) {
            FileDescriptor fd = new FileDescriptor(Descriptors.of(channel));
            return new EpollIoHandle() {
                @Override
                public FileDescriptor fd() {
                    return fd;
                }

                @Override
                public void handle(IoRegistration registration, IoEvent event) {
                    readable.run();
                }

                @Override
                public void close() {
                    // the socket's owner closes the channel, and with it the descriptor
                }
            };
        }

        @Override
        IoOps readOps() {
            return EpollIoOps.EPOLLIN;
        }

        @Override
        public ChannelFactory<? extends ServerChannel> server() {
            return EpollServerSocketChannel::new;
        }

        @Override
        public ChannelFactory<? extends Channel> socket() {
            return EpollSocketChannel::new;
        }
    },
    NIO {
        @Override
        public DatagramChannel datagram(SocketProtocolFamily family) {
            return new NioDatagramChannel(family);
        }

        @Override
        IoHandlerFactory ioHandler() {
            return NioIoHandler.newFactory();
        }

        @Override
        IoHandle readHandle(java.nio.channels.DatagramChannel channel, Runnable readable) {
            return new NioSelectableChannelIoHandle<>(channel) {
                @Override
                protected void handle(java.nio.channels.DatagramChannel ch, SelectionKey key) {
                    readable.run();
                }
            };
        }

        @Override
        IoOps readOps() {
            return NioIoOps.READ;
        }

        @Override
        public ChannelFactory<? extends ServerChannel> server() {
            return NioServerSocketChannel::new;
        }

        @Override
        public ChannelFactory<? extends Channel> socket() {
            return NioSocketChannel::new;
        }
    };

    /**
     * Datagrams read off one socket per readiness event before going back to epoll: one a read
     * costs an epoll_wait per datagram under load (docs/benchmarks.md, "Receive batching"), and a
     * bound keeps one busy socket from starving the loop's others.
     */
    public static final int READS_PER_WAKEUP = 16;

    /**
     * Receive buffer of every UDP socket, listeners and upstream links alike (the kernel caps it at
     * net.core.rmem_max). The default (208 KiB here) holds 256 small datagrams: Redis exact mode
     * releases a whole round of queries at once, through one upstream socket, and the replies to
     * dnsperf's 400 in flight overflow it, each one dropped a SERVFAIL after the timeout.
     */
    public static final int UDP_RCVBUF_BYTES = 4 << 20;

    /**
     * Buffers for every channel: Netty's pooled allocator, not 4.2's default adaptive one, which
     * costs a saturated loop more CPU a query (docs/benchmarks.md, "Pooled allocator").
     */
    public static final ByteBufAllocator ALLOCATOR = PooledByteBufAllocator.DEFAULT;

    public static Transport best() {
        return Epoll.isAvailable() ? EPOLL : NIO;
    }

    /** A Netty datagram channel: the load tools' ({@code io.sluice.stress}); sluice's own sockets are {@link UdpSocket}s. */
    public abstract DatagramChannel datagram(SocketProtocolFamily family);

    abstract IoHandlerFactory ioHandler();

    /** What the loop is given to watch {@code channel}: it runs {@code readable} when datagrams wait. */
    abstract IoHandle readHandle(java.nio.channels.DatagramChannel channel, Runnable readable);

    abstract IoOps readOps();

    public abstract ChannelFactory<? extends ServerChannel> server();

    public abstract ChannelFactory<? extends Channel> socket();

    public boolean reusePort() {
        return this == EPOLL;
    }

    public EventLoopGroup newGroup(int threads, String name) {
        return new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(name, true), ioHandler());
    }

    public static SocketProtocolFamily familyOf(InetAddress address) {
        return address instanceof Inet6Address ? SocketProtocolFamily.INET6 : SocketProtocolFamily.INET;
    }

    @Override
    public String toString() {
        return name().toLowerCase();
    }
}
