package io.sluice.config;

import com.google.common.net.InetAddresses;
import io.sluice.transport.Addresses;
import java.net.InetSocketAddress;

/**
 * An upstream resolver as the operator wrote it: {@code HOST[:PORT]} (port 53), asked over UDP, and
 * over TCP for what came over TCP; or {@code tls://HOST[:PORT][#NAME]} (port 853), asked over TLS
 * (RFC 7858) whatever the client came over, as CoreDNS writes the scheme and Unbound the name.
 *
 * @param address where it listens
 * @param tlsName for a TLS upstream, the name its certificate must hold and that is sent as SNI:
 *                {@code #NAME}, else the host as written (a name, or an IP address the
 *                certificate must list); null for a plain one
 */
public record UpstreamAddress(InetSocketAddress address, String tlsName) {
    static final String TLS_SCHEME = "tls://";

    public static UpstreamAddress plain(InetSocketAddress address) {
        return new UpstreamAddress(address, null);
    }

    public static UpstreamAddress parse(String text) throws ConfigException {
        String t = text.trim();
        if (!t.regionMatches(true, 0, TLS_SCHEME, 0, TLS_SCHEME.length())) {
            if (t.contains("://")) {
                throw new ConfigException("'" + text + "': the only scheme is tls:// (write HOST:PORT for plain DNS)");
            }
            return plain(Values.address(t, SettingTable.UPSTREAM_DEFAULT_PORT, false));
        }
        String rest = t.substring(TLS_SCHEME.length());
        int hash = rest.indexOf('#');
        InetSocketAddress address = Values.address(hash < 0 ? rest : rest.substring(0, hash), SettingTable.DOT_PORT,
                false);
        // the host as written: a name resolved keeps it, an address literal is its own text
        String name = hash < 0 ? address.getHostString() : rest.substring(hash + 1);
        if (name.isEmpty()) {
            throw new ConfigException("'" + text + "': no name after '#' (write tls://9.9.9.9#dns.quad9.net)");
        }
        return new UpstreamAddress(address, name);
    }

    public boolean overTls() {
        return tlsName != null;
    }

    /** As the operator would write it back: {@code 9.9.9.9:53}, or {@code tls://9.9.9.9:853#dns.quad9.net}. */
    @Override
    public String toString() {
        if (!overTls()) {
            return Addresses.text(address);
        }
        boolean nameIsAddress = InetAddresses.isInetAddress(tlsName)
                && InetAddresses.forString(tlsName).equals(address.getAddress());
        return TLS_SCHEME + Addresses.text(address) + (nameIsAddress ? "" : "#" + tlsName);
    }
}
