package io.sluice.cookie;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.common.hash.Hashing;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ServerCookiesTest {
    private static final long SECOND = 1_000_000_000L;
    private static final HexFormat HEX = HexFormat.of();

    /** RFC 9018 appendix A.1: a server cookie BIND, Knot, Unbound and PowerDNS would all mint. */
    @Test
    void mintsRfc9018sExampleCookie() throws Exception {
        ServerCookies cookies = new ServerCookies(HEX.parseHex("e5e973e5a6b2a43f48e7dc849e37bfcf"));
        long client = Long.parseUnsignedLong("2464c4abcf10c957", 16);
        long head = ServerCookies.head(1559731985);
        long hash = cookies.mint(client, head, InetAddress.getByName("198.51.100.100"));
        assertEquals("010000005cf79f111f8130c3eee29480", String.format("%016x%016x", head, hash));
        assertTrue(cookies.valid(client, head, hash, InetAddress.getByName("198.51.100.100"), 1559731985 * SECOND));
    }

    /** The hand-written SipHash against Guava's, over both lengths a server cookie hashes. */
    @Test
    void hashesAsGuavaDoesForIpv4AndIpv6Clients() {
        Random random = new Random(7);
        for (int i = 0; i < 1000; i++) {
            long k0 = random.nextLong();
            long k1 = random.nextLong();
            long m0 = random.nextLong();
            long m1 = random.nextLong();
            int ip4 = random.nextInt();
            long m2 = random.nextLong();
            long m3 = random.nextLong();
            ByteBuffer b20 = ByteBuffer.allocate(20).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(m0).putLong(m1).putInt(ip4);
            ByteBuffer b32 = ByteBuffer.allocate(32).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                    .putLong(m0).putLong(m1).putLong(m2).putLong(m3);
            assertEquals(Hashing.sipHash24(k0, k1).hashBytes(b20.array()).asLong(), SipHash.of20(k0, k1, m0, m1, ip4));
            assertEquals(Hashing.sipHash24(k0, k1).hashBytes(b32.array()).asLong(),
                    SipHash.of32(k0, k1, m0, m1, m2, m3));
        }
    }

    @Test
    void aCookieIsValidFromFiveMinutesAheadToAnHourOldForItsClientAlone() throws Exception {
        ServerCookies cookies = new ServerCookies(new byte[16]);
        InetAddress client = InetAddress.getByName("2001:db8::53");
        long clientCookie = 0x0102030405060708L;
        long minted = 1_800_000_000L;
        long head = ServerCookies.head(minted);
        long hash = cookies.mint(clientCookie, head, client);
        assertTrue(cookies.valid(clientCookie, head, hash, client, (minted + 3600) * SECOND));
        assertFalse(cookies.valid(clientCookie, head, hash, client, (minted + 3601) * SECOND), "an hour old");
        assertTrue(cookies.valid(clientCookie, head, hash, client, (minted - 300) * SECOND));
        assertFalse(cookies.valid(clientCookie, head, hash, client, (minted - 301) * SECOND), "too far ahead");
        assertFalse(cookies.valid(clientCookie, head, hash, InetAddress.getByName("2001:db8::54"), minted * SECOND),
                "another client's address");
        assertFalse(cookies.valid(clientCookie + 1, head, hash, client, minted * SECOND), "another client cookie");
        assertFalse(cookies.valid(clientCookie, head, hash ^ 1, client, minted * SECOND), "a wrong hash");
        assertFalse(cookies.valid(clientCookie, head | 1L << 40, hash, client, minted * SECOND), "reserved octets set");
    }

    @Test
    void beforeAnyReplacementNoOtherKeyIsAccepted() throws Exception {
        byte[] secret = new byte[16];
        secret[15] = 9;
        ServerCookies cookies = new ServerCookies(secret);
        InetAddress client = InetAddress.getByName("192.0.2.7");
        long now = 1_800_000_000L * SECOND;
        long head = ServerCookies.head(now / SECOND);
        long underZeroKey = new ServerCookies(new byte[16]).mint(42, head, client);
        assertFalse(cookies.valid(42, head, underZeroKey, client, now), "a cookie anyone can compute");
        assertTrue(cookies.valid(42, head, cookies.mint(42, head, client), client, now));
    }

    @Test
    void aReplacedSecretsCookiesStayValidForAnHour() throws Exception {
        byte[] first = new byte[16];
        byte[] second = new byte[16];
        second[0] = 1;
        ServerCookies cookies = new ServerCookies(first);
        InetAddress client = InetAddress.getByName("192.0.2.7");
        long now = 1_800_000_000L * SECOND;
        long head = ServerCookies.head(now / SECOND);
        long old = cookies.mint(42, head, client);
        assertFalse(cookies.replaceSecret(first, now), "the same secret again is no change");
        assertTrue(cookies.replaceSecret(second, now));
        assertTrue(cookies.valid(42, head, old, client, now + 1800 * SECOND), "the previous secret, half an hour on");
        long fresh = cookies.mint(42, head, client);
        assertTrue(fresh != old);
        assertTrue(cookies.valid(42, head, fresh, client, now));
        long laterHead = ServerCookies.head(now / SECOND + 3500);
        long laterOld = new ServerCookies(first).mint(42, laterHead, client);
        assertFalse(cookies.valid(42, laterHead, laterOld, client, now + 3601 * SECOND),
                "the previous secret is forgotten an hour after it was replaced");
    }
}
