package io.sluice.stress;

import com.google.common.net.HostAndPort;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.DatagramPacket;
import io.sluice.posix.Signals;
import io.sluice.config.ConfigException;
import io.sluice.config.Durations;
import io.sluice.transport.TcpFraming;
import io.sluice.transport.Transport;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code answer}: an authoritative server that answers every query, UDP and TCP on one port, as
 * the fast upstream of a benchmark where nsd is not installed: {@code A 192.0.2.1} for an A query,
 * an empty NOERROR for any other type. It reads the header and question only.
 */
@Command(name = "answer", mixinStandardHelpOptions = true,
        description = "Answer every DNS query (A 192.0.2.1), for benchmarks without nsd; names under an"
                + " --nx-zone that no --exists names get NXDOMAIN, as a victim of a random-subdomain flood answers.")
public final class AnswerCommand implements Callable<Integer> {
    /** The answer record: a pointer to the question name, A, IN, TTL 60, 192.0.2.1. */
    private static final byte[] A_RECORD = {
        (byte) 0xC0, 0x0C, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, (byte) 192, 0, 2, 1};

    @Option(names = "--listen", paramLabel = "HOST:PORT", description = "Default 127.0.0.1:5300.")
    String listen = "127.0.0.1:5300";

    @Option(names = "--nx-zone", paramLabel = "ZONE",
            description = "Names under ZONE get NXDOMAIN with its SOA (TTL and MINIMUM 60), but those --exists gives; repeatable.")
    List<String> nxZones = List.of();

    @Option(names = "--exists", paramLabel = "NAME", description = "A name under an --nx-zone that exists; repeatable.")
    List<String> existing = List.of();

    @Option(names = "--delay", paramLabel = "DURATION",
            description = "Wait this long before each answer, as a recursive resolver's cache miss makes its client wait. Default 0.")
    String delay = "0ms";

    /** Set by {@link #call} from --delay; read by the handlers on the one loop. */
    static long delayNanos;

    /** Set by {@link #call} from the options; read by the handlers on the one loop. */
    static Zones zones = new Zones(List.of(), List.of());

    /** The --nx-zone and --exists names, lower case, without the final dot. */
    record Zones(List<String> nx, List<String> exist) {
        Zones {
            nx = nx.stream().map(Zones::plain).toList();
            exist = exist.stream().map(Zones::plain).toList();
        }

        private static String plain(String name) {
            String n = name.toLowerCase(java.util.Locale.ROOT);
            return n.endsWith(".") ? n.substring(0, n.length() - 1) : n;
        }

        /** Where in {@code name} (dotted, lower case) its NXDOMAIN zone starts, or -1 when it exists. */
        int nxZoneAt(String name) {
            if (exist.contains(name)) {
                return -1;
            }
            for (String z : nx) {
                if (name.endsWith("." + z)) {
                    return name.length() - z.length();
                }
            }
            return -1;
        }
    }

    @Override
    public Integer call() throws Exception {
        zones = new Zones(nxZones, existing);
        try {
            delayNanos = Durations.parse(delay).toNanos();
        } catch (ConfigException e) {
            System.err.println("answer: --delay: " + e.getMessage());
            return 2;
        }
        HostAndPort hp = HostAndPort.fromString(listen).withDefaultPort(53);
        InetSocketAddress at = new InetSocketAddress(InetAddress.getByName(hp.getHost()), hp.getPort());
        Transport transport = Transport.best();
        EventLoopGroup group = transport.newGroup(1, "answer");
        try {
            new Bootstrap().group(group)
                    .channelFactory(() -> transport.datagram(Transport.familyOf(at.getAddress())))
                    .option(ChannelOption.SO_RCVBUF, 4 << 20)
                    .option(ChannelOption.RCVBUF_ALLOCATOR, new FixedRecvByteBufAllocator(4096).maxMessagesPerRead(16))
                    .handler(new Udp()).bind(at).sync();
            new ServerBootstrap().group(group)
                    .channelFactory(transport.server())
                    .childHandler(new ChannelInitializer<>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            TcpFraming.addTo(ch.pipeline());
                            ch.pipeline().addLast(new Tcp());
                        }
                    }).bind(at).sync();
        } catch (Exception e) {
            System.err.println("answer: cannot listen on " + listen + ": " + e.getMessage());
            group.shutdownGracefully();
            return 1;
        }
        System.err.println("answer: answering every query on " + listen + " (udp, tcp)");
        CountDownLatch stop = new CountDownLatch(1);
        Signals.on("TERM", s -> stop.countDown());
        Signals.on("INT", s -> stop.countDown());
        stop.await();
        group.shutdownGracefully().sync();
        return 0;
    }

    /** The answer to {@code q}, or null when it is not a query with one readable question. */
    static ByteBuf answer(ByteBuf q, ByteBuf out) {
        int base = q.readerIndex();
        int end = q.writerIndex();
        if (end - base < 12 || (q.getByte(base + 2) & 0x80) != 0 || q.getUnsignedShort(base + 4) != 1) {
            return null;
        }
        int pos = base + 12;
        while (pos < end && q.getUnsignedByte(pos) != 0) {
            int len = q.getUnsignedByte(pos);
            if (len > 63) {
                return null;
            }
            pos += len + 1;
        }
        if (pos + 5 > end) {
            return null;
        }
        int questionEnd = pos + 5;
        int zoneAt = zones.nx().isEmpty() ? -1 : zones.nxZoneAt(dotted(q, base + 12));
        if (zoneAt >= 0) {
            return nxdomain(q, base, questionEnd, zoneAt, out);
        }
        boolean a = q.getUnsignedShort(pos + 1) == 1;
        out.writeShort(q.getUnsignedShort(base));
        out.writeShort(0x8400 | (q.getUnsignedShort(base + 2) & 0x7900)); // QR, AA; opcode, RD kept
        out.writeShort(1);
        out.writeShort(a ? 1 : 0);
        out.writeZero(4);
        out.writeBytes(q, base + 12, questionEnd - base - 12);
        if (a) {
            out.writeBytes(A_RECORD);
        }
        return out;
    }

    /** The name at {@code at}, uncompressed, dotted and in lower case. */
    private static String dotted(ByteBuf q, int at) {
        StringBuilder b = new StringBuilder();
        for (int len = q.getUnsignedByte(at); len != 0; len = q.getUnsignedByte(at)) {
            if (b.length() > 0) {
                b.append('.');
            }
            for (int i = 1; i <= len; i++) {
                b.append((char) Character.toLowerCase(q.getByte(at + i)));
            }
            at += len + 1;
        }
        return b.toString();
    }

    /**
     * NXDOMAIN with the zone's SOA in the authority section, its owner a pointer into the question
     * at the zone's labels ({@code zoneAt} characters into the dotted name, which is that many
     * octets into the wire name).
     */
    private static ByteBuf nxdomain(ByteBuf q, int base, int questionEnd, int zoneAt, ByteBuf out) {
        out.writeShort(q.getUnsignedShort(base));
        out.writeShort(0x8403 | (q.getUnsignedShort(base + 2) & 0x7900)); // QR, AA, NXDOMAIN
        out.writeShort(1);
        out.writeShort(0);
        out.writeShort(1);
        out.writeShort(0);
        out.writeBytes(q, base + 12, questionEnd - base - 12);
        out.writeShort(0xC000 | (12 + zoneAt));
        out.writeShort(6); // SOA
        out.writeShort(1);
        out.writeInt(60);
        out.writeShort(22);
        out.writeByte(0); // MNAME and RNAME: the root, to keep it short
        out.writeByte(0);
        out.writeInt(1);
        out.writeInt(3600);
        out.writeInt(600);
        out.writeInt(86400);
        out.writeInt(60); // MINIMUM
        return out;
    }

    /** Writes {@code answer}, flushed with the read's others, or on its own after --delay. */
    private static void reply(ChannelHandlerContext ctx, Object answer) {
        if (delayNanos > 0) {
            ctx.executor().schedule(() -> ctx.writeAndFlush(answer, ctx.voidPromise()), delayNanos, TimeUnit.NANOSECONDS);
        } else {
            ctx.write(answer, ctx.voidPromise());
        }
    }

    private static final class Udp extends SimpleChannelInboundHandler<DatagramPacket> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, DatagramPacket p) {
            ByteBuf out = ctx.alloc().buffer(512);
            if (answer(p.content(), out) == null) {
                out.release();
                return;
            }
            reply(ctx, new DatagramPacket(out, p.sender()));
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }
    }

    private static final class Tcp extends SimpleChannelInboundHandler<ByteBuf> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
            ByteBuf out = ctx.alloc().buffer(512);
            if (answer(frame, out) == null) {
                out.release();
                ctx.close();
                return;
            }
            reply(ctx, out);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
