package io.sluice.acl;

import io.sluice.config.SettingTable;
import io.sluice.config.Settings;
import io.sluice.transport.Addresses;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * The client rules in force: the networks of {@code allow-clients}, what {@code acl-action} does
 * with the rest, the sources of {@code proxy-protocol-from}, which name the client they speak for,
 * and those of {@code connection-exempt-clients}, not held to the per-client connection bounds. Shared by every loop's {@link AccessControl} and the listeners, and replaced whole by a
 * reload. Whether a source speaks for clients is read as a datagram or connection arrives, and a
 * query's client judged when the query is: one volatile read each, so the judgement is by the
 * {@code allow-clients} and {@code acl-action} of before a reload or of after it, never a mix. A
 * datagram that arrives across a reload may have its header read by the rules of before and its
 * client judged by those of after, as a TCP connection accepted before a reload has its queries
 * judged by the rules after it.
 */
public final class ClientRules {
    /** One set of rules; never changed once made. */
    public record Rules(ClientNetworks allowed, boolean drop, ClientNetworks proxies, ClientNetworks connectionExempt) {
        public boolean allows(InetAddress client) {
            return allowed.allows(client);
        }

        /** Whether what comes from {@code source} starts with a PROXY header naming the client. */
        public boolean speaksForClients(InetAddress source) {
            return proxies.allows(source); // none: an empty walk for IPv4, one length check for IPv6
        }

        /**
         * Whether connections from {@code source} count towards its client's connection bounds:
         * not a proxy's (it speaks for many) nor a {@code connection-exempt-clients} source's.
         */
        public boolean heldToClientBounds(InetAddress source) {
            return !proxies.allows(source) && !connectionExempt.allows(source);
        }
    }

    private volatile Rules rules;

    public ClientRules(Settings settings) {
        replace(settings);
    }

    /** The rules in force now. */
    public Rules now() {
        return rules;
    }

    /**
     * Puts the client rules of {@code settings} (allow-clients, acl-action, proxy-protocol-from,
     * connection-exempt-clients) in force for the next query or connection (a reload).
     */
    public void replace(Settings settings) {
        rules = new Rules(new ClientNetworks(settings.allowClients()), settings.aclAction() == SettingTable.AclAction.DROP,
                new ClientNetworks(settings.proxyProtocolFrom()), new ClientNetworks(settings.connectionExemptClients()));
    }

    /**
     * A warning for the start, or null: listen addresses other than loopback while allow-clients
     * is the default, which turns away every client there but private ones (a LAN whose clients
     * have global IPv6 addresses included).
     */
    public static String exposureWarning(Settings settings, List<InetSocketAddress> listening) {
        if (!settings.aclIsDefault()) {
            return null;
        }
        List<String> exposed = new ArrayList<>();
        for (InetSocketAddress a : listening) {
            if (!a.getAddress().isLoopbackAddress()) {
                exposed.add(Addresses.text(a));
            }
        }
        String others = settings.aclAction() == SettingTable.AclAction.DROP ? "dropped" : "refused";
        return exposed.isEmpty() ? null : "listening on " + String.join(", ", exposed) + " with the default"
                + " allow-clients: only " + SettingTable.ALLOW_CLIENTS.defaultText() + " clients are answered,"
                + " any other (a public IPv4 or IPv6 address) is " + others
                + "; set allow-clients to say who may use this forwarder";
    }
}
