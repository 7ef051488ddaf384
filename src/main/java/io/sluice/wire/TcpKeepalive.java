package io.sluice.wire;

import io.netty.buffer.ByteBuf;
import java.time.Duration;

/**
 * The edns-tcp-keepalive option (RFC 7828) of an answer relayed over TCP. It is hop by hop: it
 * tells a client how long the server will keep its idle connection open. The upstream's value is
 * about sluice's connection to the upstream, so a client would be told a timeout sluice does not
 * keep; the relayed answer carries sluice's own {@code tcp-idle-timeout} instead.
 */
public final class TcpKeepalive {
    /** The option's TIMEOUT is in units of 100 milliseconds. */
    private static final long UNIT_MILLIS = 100;

    private TcpKeepalive() {
    }

    /** {@code idle} as the option's TIMEOUT: in 100 ms units, at most 65,535 (109 minutes). */
    public static int timeout(Duration idle) {
        return (int) Math.min(0xFFFF, idle.toMillis() / UNIT_MILLIS);
    }

    /**
     * Sets the TIMEOUT of the keepalive option in {@code message}'s OPT record (between its reader
     * and writer index) to {@code timeout}, in place; a message without one, or one that does not
     * parse, is left as it is.
     */
    public static void setTimeout(ByteBuf message, int timeout) {
        int base = message.readerIndex();
        int end = message.writerIndex();
        if (end - base < Wire.HEADER_BYTES || message.getUnsignedShort(base + Wire.ARCOUNT_OFFSET) == 0) {
            return;
        }
        int optAt = Opt.find(message, base, end);
        if (optAt < 0) {
            return;
        }
        int option = Opt.optionAt(message, optAt, end, Wire.EDNS_OPTION_TCP_KEEPALIVE);
        int rdataEnd = Math.min(end, optAt + Opt.FIXED_BYTES + message.getUnsignedShort(optAt + 9));
        if (option >= 0 && message.getUnsignedShort(option + 2) == 2 && option + 6 <= rdataEnd) {
            message.setShort(option + 4, timeout);
        }
    }
}
