package io.sluice.acl;

import io.sluice.config.Network;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A list of networks ({@code allow-clients}, {@code proxy-protocol-from}), laid out to be matched
 * for every query without allocating.
 */
public final class ClientNetworks {
    /**
     * The IPv4 networks as mask and masked-address pairs, side by side in one array: below
     * saturation every query starts on cold caches, and the array is a few consecutive cache lines
     * where walking {@link Network} objects (each with its own octet array) is a miss per object
     * (docs/benchmarks.md, "Head-to-head pairs (scripts/bench-ab)").
     */
    private final int[] v4;
    /** The IPv6 networks, walked only for IPv6 clients. */
    private final Network[] v6;

    public ClientNetworks(List<Network> allowed) {
        List<Network> six = new ArrayList<>();
        int[] four = new int[2 * allowed.size()];
        int n = 0;
        for (Network net : allowed) {
            if (net.isIpv4()) {
                four[n++] = net.ipv4Mask();
                four[n++] = net.ipv4Address() & net.ipv4Mask();
            } else {
                six.add(net);
            }
        }
        this.v4 = Arrays.copyOf(four, n);
        this.v6 = six.toArray(new Network[0]);
    }

    /** Whether {@code client} is in one of the networks. */
    public boolean allows(InetAddress client) {
        if (client instanceof Inet4Address) {
            int a = client.hashCode(); // the address itself (see Network.contains)
            for (int i = 0; i < v4.length; i += 2) {
                if ((a & v4[i]) == v4[i + 1]) {
                    return true;
                }
            }
            return false;
        }
        if (v6.length == 0) {
            return false;
        }
        byte[] octets = client.getAddress(); // one copy per IPv6 query, not one per network
        for (Network n : v6) {
            if (n.contains(octets)) {
                return true;
            }
        }
        return false;
    }
}
