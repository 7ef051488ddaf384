package io.sluice.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** The PROXY v2 header read in place: its length, the client it names, and what it refuses. */
class ProxyHeaderTest {
    private static final String SIGNATURE = "0d0a0d0a000d0a515549540a";

    @Test
    void anIpv4HeaderNamesItsSourceAndEndsWhereItsLengthSays() throws Exception {
        ByteBuf b = bytes(SIGNATURE + "2112000c" + "0a010203" + "7f000001" + "14b4" + "0035" + "abcd");
        assertEquals(28, ProxyHeader.length(b));
        assertEquals(new InetSocketAddress(InetAddress.getByName("10.1.2.3"), 0x14b4), ProxyHeader.source(b),
                "the source address and port");
        assertEquals(0, b.readerIndex(), "read in place");
    }

    @Test
    void anIpv6HeaderWithTlvsIsSkippedWhole() throws Exception {
        String v6 = "20010db8000000000000000000000001";
        ByteBuf b = bytes(SIGNATURE + "2121002b" + v6 + v6 + "00010035" + "04000461626364" + "ff");
        assertEquals(16 + 43, ProxyHeader.length(b), "the TLVs are the header's too");
        assertEquals(new InetSocketAddress(InetAddress.getByName("2001:db8::1"), 1), ProxyHeader.source(b));
    }

    @Test
    void localAndUnspecifiedNameNoOne() {
        assertEquals(16, ProxyHeader.length(bytes(SIGNATURE + "20000000")));
        assertNull(ProxyHeader.source(bytes(SIGNATURE + "20000000")), "LOCAL: the proxy's own");
        ByteBuf unix = bytes(SIGNATURE + "2131" + "00d8" + "00".repeat(216));
        assertEquals(16 + 216, ProxyHeader.length(unix));
        assertNull(ProxyHeader.source(unix), "a UNIX socket's addresses are ignored");
    }

    @Test
    void aPartialHeaderIsIncompleteUntilItsLastByte() {
        String whole = SIGNATURE + "2111000c" + "0a010203" + "7f000001" + "14b40035";
        for (int hexChars = 2; hexChars < whole.length(); hexChars += 2) {
            assertEquals(ProxyHeader.INCOMPLETE, ProxyHeader.length(bytes(whole.substring(0, hexChars))), "at " + hexChars);
        }
        assertEquals(28, ProxyHeader.length(bytes(whole)));
    }

    @Test
    void whatIsNotAVersion2HeaderIsInvalid() {
        assertEquals(ProxyHeader.INVALID, ProxyHeader.length(bytes("1234010000010000")), "a DNS query");
        assertEquals(ProxyHeader.INVALID, ProxyHeader.length(bytes("50524f5859205443503420")), "version 1's text");
        assertEquals(ProxyHeader.INVALID, ProxyHeader.length(bytes(SIGNATURE + "1111000c" + "00".repeat(12))),
                "version 1 in binary");
        assertEquals(ProxyHeader.INVALID, ProxyHeader.length(bytes(SIGNATURE + "2211000c" + "00".repeat(12))),
                "an unknown command");
        assertEquals(ProxyHeader.INVALID, ProxyHeader.length(bytes(SIGNATURE + "21110004" + "00".repeat(4))),
                "too short for its family's addresses");
    }

    private static ByteBuf bytes(String hex) {
        return Unpooled.wrappedBuffer(HexFormat.of().parseHex(hex));
    }
}
