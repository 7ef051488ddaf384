package io.sluice.acl;

import io.sluice.config.Network;
import java.net.InetAddress;
import java.util.List;

/**
 * The client rules in force: the networks of {@code allow-clients} and what {@code acl-action}
 * does with the rest, shared by every loop's {@link AccessControl} and the TCP listener's accept,
 * and replaced whole by a reload. One volatile read a query: a query is judged by the rules of
 * before or of after a reload, never by a mix of the two.
 */
public final class ClientRules {
    /** One set of rules; never changed once made. */
    public record Rules(ClientNetworks allowed, boolean drop) {
        public boolean allows(InetAddress client) {
            return allowed.allows(client);
        }
    }

    private volatile Rules rules;

    public ClientRules(List<Network> allowed, boolean drop) {
        replace(allowed, drop);
    }

    /** The rules in force now. */
    public Rules now() {
        return rules;
    }

    /** Puts {@code allowed} and {@code drop} in force for the next query or connection (a reload). */
    public void replace(List<Network> allowed, boolean drop) {
        rules = new Rules(new ClientNetworks(allowed), drop);
    }
}
