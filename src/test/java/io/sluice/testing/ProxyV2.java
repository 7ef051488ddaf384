package io.sluice.testing;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.ByteBuffer;

/** PROXY protocol v2 headers as a proxy writes them before a datagram or a connection's bytes. */
public final class ProxyV2 {
    public static final byte[] SIGNATURE = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};
    /** The transport nibble of a datagram's header. */
    public static final int UDP = 2;
    /** The transport nibble of a stream's header. */
    public static final int TCP = 1;
    /** The client's port every header here names. */
    public static final int CLIENT_PORT = 5300;

    private ProxyV2() {
    }

    /** {@code message} after a PROXY v2 header naming {@code client} (port 5300) to 127.0.0.1 or ::1 (port 53). */
    public static byte[] proxied(String client, int transport, byte[] message) throws Exception {
        InetAddress a = InetAddress.getByName(client);
        boolean v4 = a instanceof Inet4Address;
        int block = v4 ? 12 : 36;
        ByteBuffer b = ByteBuffer.allocate(16 + block + message.length);
        b.put(SIGNATURE).put((byte) 0x21).put((byte) ((v4 ? 0x10 : 0x20) | transport)).putShort((short) block);
        b.put(a.getAddress()).put(InetAddress.getByName(v4 ? "127.0.0.1" : "::1").getAddress());
        b.putShort((short) CLIENT_PORT).putShort((short) 53).put(message);
        return b.array();
    }

    /** {@code message} after a LOCAL header: the proxy's own query, as a health check. */
    public static byte[] local(byte[] message) {
        ByteBuffer b = ByteBuffer.allocate(16 + message.length);
        b.put(SIGNATURE).put((byte) 0x20).put((byte) 0).putShort((short) 0).put(message);
        return b.array();
    }
}
