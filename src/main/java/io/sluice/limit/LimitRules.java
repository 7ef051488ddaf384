package io.sluice.limit;

import io.sluice.config.LimitSettings;
import io.sluice.config.Network;
import java.net.InetAddress;

/**
 * Everything a reload of limits replaces, as one value: the budgets, the flood settings, the
 * action, dry run and the exempt clients. The limiter publishes it whole with one volatile write
 * ({@link DomainLimiter#rules(LimitRules)}), so no query sees the budgets of one file beside the
 * action or exemptions of another. Never changed once made; the exempt array is never written.
 *
 * <p>A per-client limiter carries rules too, of which it reads only the budgets: the limit stage
 * reads the action, dry run and exemptions from the domain limiter's.
 *
 * @param flood         read only while the limiter watches floods; null for a limiter that never does
 * @param verifiedShare limits.verified-share: what of each budget unverified queries cannot spend
 * @param slip          of the unverified UDP queries refused, every slip-th is answered TC instead; 0: none
 */
public record LimitRules(PolicyTable budgets, LimitSettings.Flood flood, LimitSettings.Action action, boolean dryRun,
                         Network[] exempt, double verifiedShare, int slip) {
    /** A limiter's rules with only budgets: refused over them, nothing exempt, no flood watch. */
    public static LimitRules of(PolicyTable budgets) {
        return new LimitRules(budgets, null, LimitSettings.Action.REFUSED, false, new Network[0], 0, 0);
    }

    /** The rules {@code s} gives with {@code budgets}. */
    static LimitRules of(PolicyTable budgets, LimitSettings s) {
        return new LimitRules(budgets, s.flood(), s.action(), s.dryRun(),
                s.exemptClients().toArray(new Network[0]), s.verifiedShare(), s.slip());
    }

    /** Whether queries from {@code client} are never limited. */
    public boolean exempts(InetAddress client) {
        for (Network n : exempt) {
            if (n.contains(client)) {
                return true;
            }
        }
        return false;
    }

    /** These rules with other budgets (the admin API's change, a runtime entry expiring). */
    LimitRules withBudgets(PolicyTable next) {
        return new LimitRules(next, flood, action, dryRun, exempt, verifiedShare, slip);
    }
}
