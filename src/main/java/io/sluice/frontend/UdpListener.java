package io.sluice.frontend;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.DatagramPacket;

/** Reads client datagrams off one UDP socket into its loop's {@link QueryHandler}. */
final class UdpListener extends SimpleChannelInboundHandler<DatagramPacket> {
    private final QueryHandler handler;

    UdpListener(QueryHandler handler) {
        this.handler = handler;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, DatagramPacket packet) {
        handler.meters().queriesUdp.increment();
        handler.handle(packet.content(), ctx.channel(), packet.sender());
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        handler.endOfBurst();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        handler.meters().ioErrors.increment(); // e.g. a send to a client that went away: not fatal
    }
}
