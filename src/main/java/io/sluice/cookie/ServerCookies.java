package io.sluice.cookie;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.ByteOrder;

/**
 * Server cookies of RFC 9018's interoperable form, minted and checked: version 1, three reserved
 * octets, the time in seconds, and SipHash-2-4 under a 16-octet secret of the client cookie, those
 * eight octets and the client's address. A fleet behind one address that shares the secret (BIND,
 * Knot, Unbound and PowerDNS make the same cookie from it) accepts each other's cookies (RFC 9018
 * section 4). A cookie is valid from 5 minutes before its time until an hour after, under the
 * secret in force or, for an hour after it was replaced, the one before.
 *
 * <p>Thread-safe: the secrets are one value behind a volatile field, replaced whole by
 * {@link #replaceSecret}; every other method only reads.
 */
public final class ServerCookies {
    /** How long a server cookie stays valid after its time (RFC 9018 section 4.3). */
    static final int VALID_SECONDS = 3600;
    /** How far ahead of the clock a cookie's time may be: another server's clock (section 4.3). */
    static final int AHEAD_SECONDS = 300;
    /** How long a replaced secret's cookies stay valid: as long as a cookie's own validity. */
    static final long PREVIOUS_SECRET_NANOS = VALID_SECONDS * 1_000_000_000L;
    /** Octets of a secret: SipHash's key. */
    public static final int SECRET_BYTES = 16;
    private static final long VERSION_1 = 1L << 56;
    private static final VarHandle LITTLE_ENDIAN_LONGS =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    /** The key in force and, when {@code previous}, the one before it, valid until {@code previousUntilNanos}. */
    private record Secrets(long k0, long k1, boolean previous, long previousK0, long previousK1,
                           long previousUntilNanos) {
        static Secrets of(byte[] secret) {
            return new Secrets(word(secret, 0), word(secret, 8), false, 0, 0, 0);
        }
    }

    private volatile Secrets secrets;

    /** @param secret the 16 octets of SipHash's key */
    public ServerCookies(byte[] secret) {
        this.secrets = Secrets.of(checked(secret));
    }

    /**
     * Puts {@code secret} in force at {@code nowNanos} (epoch); cookies of the one it replaces stay
     * valid for an hour. The same secret again changes nothing. Called by one thread at a time (reloads).
     *
     * @return whether the secret changed
     */
    public boolean replaceSecret(byte[] secret, long nowNanos) {
        Secrets old = secrets;
        Secrets next = Secrets.of(checked(secret));
        if (next.k0 == old.k0 && next.k1 == old.k1) {
            return false;
        }
        secrets = new Secrets(next.k0, next.k1, true, old.k0, old.k1, nowNanos + PREVIOUS_SECRET_NANOS);
        return true;
    }

    /** The first half of a server cookie minted at {@code seconds}: version 1, reserved zeros, the time. */
    public static long head(long seconds) {
        return VERSION_1 | (seconds & 0xFFFFFFFFL);
    }

    /** The hash of a server cookie with {@code head} for {@code client}'s {@code clientCookie}, under the secret in force. */
    public long mint(long clientCookie, long head, InetAddress client) {
        Secrets s = secrets;
        return hash(s.k0, s.k1, clientCookie, head, client);
    }

    /**
     * Whether {@code head}, {@code hash} is a server cookie minted for {@code client}'s
     * {@code clientCookie} within its validity at {@code nowNanos} (epoch), under the secret in
     * force or the one before it while that is still accepted.
     */
    public boolean valid(long clientCookie, long head, long hash, InetAddress client, long nowNanos) {
        if ((head & ~0xFFFFFFFFL) != VERSION_1) {
            return false; // another version, or reserved octets set: not one of these
        }
        int age = (int) (nowNanos / 1_000_000_000L) - (int) head; // serial arithmetic on 32 bits (RFC 1982)
        if (age > VALID_SECONDS || age < -AHEAD_SECONDS) {
            return false;
        }
        Secrets s = secrets;
        return hash(s.k0, s.k1, clientCookie, head, client) == hash || s.previous
                && nowNanos - s.previousUntilNanos < 0 && hash(s.previousK0, s.previousK1, clientCookie, head, client) == hash;
    }

    /**
     * SipHash-2-4 of the client cookie, the head and the address's octets, as RFC 9018 section 4.4
     * lays them out; the octets are on the wire as big-endian longs, SipHash reads little-endian
     * words, and its result goes on the wire little-endian: hence the byte swaps.
     */
    private static long hash(long k0, long k1, long clientCookie, long head, InetAddress client) {
        long m0 = Long.reverseBytes(clientCookie);
        long m1 = Long.reverseBytes(head);
        long h;
        if (client instanceof Inet4Address) {
            h = SipHash.of20(k0, k1, m0, m1, Integer.reverseBytes(client.hashCode())); // hashCode: the address, big-endian
        } else {
            byte[] octets = client.getAddress();
            h = SipHash.of32(k0, k1, m0, m1, word(octets, 0), word(octets, 8));
        }
        return Long.reverseBytes(h);
    }

    private static long word(byte[] octets, int at) {
        return (long) LITTLE_ENDIAN_LONGS.get(octets, at);
    }

    private static byte[] checked(byte[] secret) {
        if (secret.length != SECRET_BYTES) {
            throw new IllegalArgumentException("a cookie secret is " + SECRET_BYTES + " octets, not " + secret.length);
        }
        return secret;
    }
}
