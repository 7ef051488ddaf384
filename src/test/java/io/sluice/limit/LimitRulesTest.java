package io.sluice.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.config.ConfigException;
import io.sluice.config.LimitSettings;
import io.sluice.config.Settings;
import io.sluice.domain.DomainKey;
import io.sluice.testing.TestSettings;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A reload of limits puts every rule in force at once, and a refused reload puts none. */
class LimitRulesTest {
    private static final String FIRST = "action: refused\nlimits:\n  default: { queries: 100, window: 1s }\n"
            + "  flood: { detect: true, nxdomain-ratio: 0.5, min-answers: 20, budget: 0.1 }\n";
    private static final String SECOND = "action: nxdomain\ndry-run: true\nlimits:\n  default: { queries: 200, window: 1s }\n"
            + "  exempt-clients: [10.0.0.0/8]\n  domains:\n    example.com: { queries: 5, window: 1s }\n"
            + "  flood: { detect: true, nxdomain-ratio: 0.5, min-answers: 20, budget: 0.5 }\n";

    @TempDir
    Path dir;
    private Limits limits;

    @AfterEach
    void stop() {
        if (limits != null) {
            limits.close();
        }
    }

    @Test
    void aReloadPublishesBudgetsFloodSettingsActionDryRunAndExemptionsAsOneValue() throws Exception {
        limits = Limits.from(settings(FIRST).limits(), new ManualClock(), p -> new HeapCounters(), true);
        LimitRules before = limits.limiter().rules();

        limits.reload(settings(SECOND).limits());

        LimitRules after = limits.limiter().rules();
        assertEquals(200, after.budgets().defaultPolicy().queries());
        assertEquals(5, after.budgets().of(DomainKey.of("example.com")).queries());
        assertEquals(LimitSettings.Action.NXDOMAIN, after.action());
        assertTrue(after.dryRun());
        assertTrue(after.exempts(InetAddress.getByName("10.1.2.3")));
        assertEquals(0.5, after.flood().fraction());
        // the rules read before are a value of their own: a query that read them sees the first file whole
        assertEquals(100, before.budgets().defaultPolicy().queries());
        assertEquals(LimitSettings.Action.REFUSED, before.action());
        assertFalse(before.dryRun());
        assertFalse(before.exempts(InetAddress.getByName("10.1.2.3")));
        assertEquals(0.1, before.flood().fraction());
    }

    @Test
    void aRuntimeBudgetKeepsTheRestOfTheRulesAndSurvivesAReload() throws Exception {
        limits = Limits.from(settings(SECOND).limits(), new ManualClock(), p -> new HeapCounters(), true);
        limits.budgets().set("example.org", new LimitSettings.DomainLimit(7, Duration.ofSeconds(1)), 0, null, "test",
                "test");
        LimitRules r = limits.limiter().rules();
        assertEquals(7, r.budgets().of(DomainKey.of("example.org")).queries());
        assertEquals(LimitSettings.Action.NXDOMAIN, r.action());
        assertTrue(r.exempts(InetAddress.getByName("10.1.2.3")));

        limits.reload(settings(FIRST).limits());
        assertEquals(7, limits.limiter().rules().budgets().of(DomainKey.of("example.org")).queries());
        assertEquals(LimitSettings.Action.REFUSED, limits.limiter().rules().action());
    }

    @Test
    void aRefusedReloadChangesNothing() throws Exception {
        limits = Limits.from(settings(FIRST).limits(), new ManualClock(), p -> new HeapCounters(), true);
        LimitRules before = limits.limiter().rules();
        Settings bad = settings(SECOND.replace("example.com", "co.uk")); // a public suffix, no registrable domain
        assertThrows(ConfigException.class, () -> limits.reload(bad.limits()));
        assertSame(before, limits.limiter().rules());
    }

    private Settings settings(String yaml) throws Exception {
        return TestSettings.fromYaml(dir, yaml);
    }
}
