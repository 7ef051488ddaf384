package io.sluice.config;

import com.google.common.net.InetAddresses;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

/**
 * A client network: {@code 10.0.0.0/8}, {@code ::1/128}, or one address.
 *
 * @param address the network's address octets (4 or 16)
 * @param prefix  leading bits that must match
 */
public record Network(byte[] address, int prefix) {

    static Network parse(String text) throws ConfigException {
        String t = text.trim();
        int slash = t.indexOf('/');
        String host = slash < 0 ? t : t.substring(0, slash);
        if (!InetAddresses.isInetAddress(host)) {
            throw new ConfigException("'" + text + "' is not an address or network (write 10.0.0.0/8 or ::1/128)");
        }
        byte[] a = InetAddresses.forString(host).getAddress();
        int prefix = a.length * 8;
        if (slash >= 0) {
            prefix = Values.integer(t.substring(slash + 1), 0, a.length * 8);
        }
        Network n = new Network(a, prefix);
        if (!Arrays.equals(n.masked(), a)) {
            // 10.0.0.1/8 is most likely a typo for an address or for 10.0.0.0/8: say which it means
            Network meant = new Network(n.masked(), prefix);
            throw new ConfigException("'" + text + "' is not a network address: host bits are set (did you mean "
                    + meant + ", or " + host + " alone?)");
        }
        return n;
    }

    public boolean isIpv4() {
        return address.length == 4;
    }

    /** The prefix as an IPv4 mask ({@code /8} is {@code 0xFF000000}). */
    public int ipv4Mask() {
        return prefix == 0 ? 0 : -1 << (32 - prefix);
    }

    /** The IPv4 address as an int, high octet first. */
    public int ipv4Address() {
        return (address[0] & 0xFF) << 24 | (address[1] & 0xFF) << 16 | (address[2] & 0xFF) << 8 | (address[3] & 0xFF);
    }

    /** The address with the bits past the prefix cleared. */
    private byte[] masked() {
        byte[] m = address.clone();
        for (int bit = prefix; bit < m.length * 8; bit++) {
            m[bit / 8] &= (byte) ~(0x80 >>> (bit % 8));
        }
        return m;
    }

    /**
     * True when {@code client} is inside this network (an IPv4 client never matches an IPv6 network).
     * An IPv4 client is matched without allocating: {@code Inet4Address.hashCode()} is the address
     * itself in OpenJDK (a test checks it), where {@code getAddress()} copies an array per call,
     * and this runs for every query when an ACL or exemptions are set.
     */
    public boolean contains(InetAddress client) {
        if (client instanceof Inet4Address) {
            if (address.length != 4) {
                return false;
            }
            int mask = ipv4Mask();
            return (client.hashCode() & mask) == (ipv4Address() & mask);
        }
        return contains(client.getAddress());
    }

    /** {@link #contains(InetAddress)} for an address's octets (4 or 16). */
    public boolean contains(byte[] c) {
        if (c.length != address.length) {
            return false;
        }
        int full = prefix / 8;
        for (int i = 0; i < full; i++) {
            if (c[i] != address[i]) {
                return false;
            }
        }
        int rest = prefix % 8;
        if (rest == 0) {
            return true;
        }
        int mask = 0xFF << (8 - rest);
        return (c[full] & mask) == (address[full] & mask);
    }

    /** Networks are equal by their octets and prefix (a record compares arrays by reference). */
    @Override
    public boolean equals(Object o) {
        return o instanceof Network n && prefix == n.prefix && Arrays.equals(address, n.address);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(address) + prefix;
    }

    @Override
    public String toString() {
        try {
            return InetAddresses.toAddrString(InetAddress.getByAddress(address)) + "/" + prefix;
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
