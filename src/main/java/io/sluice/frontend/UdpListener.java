package io.sluice.frontend;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.DatagramPacket;
import io.sluice.pipeline.Pipeline;

/** Reads client datagrams off one UDP socket into its loop's {@link Pipeline}. */
final class UdpListener extends SimpleChannelInboundHandler<DatagramPacket> {
    private final Pipeline pipeline;
    private final ListenerMeters meters;

    UdpListener(Pipeline pipeline, ListenerMeters meters) {
        this.pipeline = pipeline;
        this.meters = meters;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, DatagramPacket packet) {
        meters.queriesUdp.increment();
        pipeline.handle(packet.content(), ctx.channel(), packet.sender());
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        pipeline.endOfBurst();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        meters.ioErrors.increment(); // e.g. a send to a client that went away: not fatal
    }
}
