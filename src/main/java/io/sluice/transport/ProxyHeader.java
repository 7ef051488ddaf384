package io.sluice.transport;

import io.netty.buffer.ByteBuf;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/**
 * The PROXY protocol's version 2 header (HAProxy's "proxy-protocol.txt", section 2.2), read in
 * place where a trusted load balancer or forwarder puts it: before each datagram's DNS message,
 * once at the start of a TCP connection. It names the client the proxy speaks for.
 *
 * <p>Only version 2, as dnsdist, Unbound and Knot Resolver send and accept it for DNS; the text
 * version 1 is for TCP alone and is not read. Netty's {@code HAProxyMessageDecoder} decodes the
 * same header, but as a stream decoder that makes a message object holding the addresses as
 * strings: on UDP this runs for every datagram, and here it makes one address object, only when
 * the header names one.
 */
public final class ProxyHeader {
    private ProxyHeader() {
    }

    /** The length of a header before its addresses: signature, version and command, family, length. */
    public static final int FIXED_BYTES = 16;
    /** What {@link #length} returns when the bytes do not start with a valid header. */
    public static final int INVALID = -1;
    /** What {@link #length} returns when the bytes so far are a header's start, but not all of it. */
    public static final int INCOMPLETE = 0;

    private static final byte[] SIGNATURE = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};
    private static final int VERSION_2 = 0x20;
    private static final int COMMAND_LOCAL = 0x0;
    private static final int COMMAND_PROXY = 0x1;
    private static final int FAMILY_INET = 0x1;
    private static final int FAMILY_INET6 = 0x2;
    /** Source and destination address and port: what an address block of each family holds at least. */
    private static final int INET_BLOCK = 4 + 4 + 2 + 2;
    private static final int INET6_BLOCK = 16 + 16 + 2 + 2;

    /**
     * The whole header's length in bytes from {@code buf}'s reader index (TLVs included, which are
     * skipped), {@link #INCOMPLETE} when more bytes are needed to tell, or {@link #INVALID}.
     */
    public static int length(ByteBuf buf) {
        int at = buf.readerIndex();
        int have = buf.readableBytes();
        for (int i = 0; i < SIGNATURE.length && i < have; i++) {
            if (buf.getByte(at + i) != SIGNATURE[i]) {
                return INVALID;
            }
        }
        if (have < FIXED_BYTES) {
            return INCOMPLETE;
        }
        int versionCommand = buf.getUnsignedByte(at + 12);
        int command = versionCommand & 0x0F;
        if ((versionCommand & 0xF0) != VERSION_2 || command != COMMAND_LOCAL && command != COMMAND_PROXY) {
            return INVALID;
        }
        int addressBytes = buf.getUnsignedShort(at + 14);
        if (command == COMMAND_PROXY && addressBytes < blockOf(buf.getUnsignedByte(at + 13) >> 4)) {
            return INVALID;
        }
        int total = FIXED_BYTES + addressBytes;
        return have < total ? INCOMPLETE : total;
    }

    /**
     * The client's address and port in the whole header at {@code buf}'s reader index (one
     * {@link #length} has found valid), or null when it names none: a proxy's own connection (LOCAL, as health
     * checks send), or a family other than IPv4 and IPv6, whose addresses the protocol says to
     * ignore. Then the proxy is its own client.
     */
    public static InetSocketAddress source(ByteBuf buf) {
        int at = buf.readerIndex();
        if ((buf.getUnsignedByte(at + 12) & 0x0F) != COMMAND_PROXY) {
            return null;
        }
        int family = buf.getUnsignedByte(at + 13) >> 4;
        if (family != FAMILY_INET && family != FAMILY_INET6) {
            return null;
        }
        byte[] octets = new byte[family == FAMILY_INET ? 4 : 16];
        buf.getBytes(at + FIXED_BYTES, octets);
        int port = buf.getUnsignedShort(at + FIXED_BYTES + 2 * octets.length); // after both addresses
        try {
            return new InetSocketAddress(InetAddress.getByAddress(octets), port);
        } catch (UnknownHostException e) {
            throw new AssertionError(e); // four or sixteen octets are always an address
        }
    }

    /**
     * Whether the whole header at {@code buf}'s reader index (one {@link #length} has found valid)
     * says its client came to the proxy in datagrams (transport DGRAM): over UDP, where its address
     * proves nothing, whatever the proxy then forwarded it over.
     */
    public static boolean fromDatagram(ByteBuf buf) {
        int at = buf.readerIndex();
        return (buf.getUnsignedByte(at + 12) & 0x0F) == COMMAND_PROXY && (buf.getUnsignedByte(at + 13) & 0x0F) == 2;
    }

    /** The least address block a PROXY command of {@code family} must carry. */
    private static int blockOf(int family) {
        return family == FAMILY_INET ? INET_BLOCK : family == FAMILY_INET6 ? INET6_BLOCK : 0;
    }
}
