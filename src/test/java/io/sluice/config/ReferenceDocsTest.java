package io.sluice.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The generated reference pages in docs/ are what their generators write today. */
class ReferenceDocsTest {

    @Test
    void configurationMdIsWhatTheSettingTableSays() throws Exception {
        Path page = Path.of("docs/configuration.md");
        assertTrue(Files.exists(page), "docs/configuration.md is missing: " + REGENERATE);
        assertEquals(ConfigurationReference.markdown(), Files.readString(page),
                "docs/configuration.md is stale: " + REGENERATE);
    }

    @Test
    void everySettingHasARowWithItsFlagAndReloadBehaviour() {
        String page = ConfigurationReference.markdown();
        for (Setting<?> s : SettingTable.ALL) {
            String row = page.lines().filter(l -> l.startsWith("| `" + s.key() + "` |")).findFirst().orElse("");
            assertTrue(row.contains("| " + ConfigurationReference.reload(s.applied()) + " |"), s.key() + ": " + row);
            assertTrue(row.contains(s.live() ? "| live (" : "| restart |"), s.key() + ": " + row);
            if (s.flag() != null) {
                assertTrue(row.contains("`" + s.flag()), s.key() + " without its flag: " + row);
            }
        }
    }

    private static final String REGENERATE = "mvn -q -DskipTests package && java -cp target/sluice.jar"
            + " io.sluice.config.ConfigurationReference docs/configuration.md";
}
