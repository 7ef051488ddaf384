package io.sluice.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/** The table of settings and conf/sluice.yml say the same (docs/configuration.md: ReferenceDocsTest). */
class SettingTableTest {

    @Test
    void confSluiceYmlGivesEveryKeyWithItsDefault() throws Exception {
        String text = Files.readString(Path.of("conf/sluice.yml"));
        Map<String, Object> conf = new LinkedHashMap<>();
        flatten("", (Map<?, ?>) new Load(LoadSettings.builder().build()).loadFromString(text), conf);
        for (Setting<?> s : SettingTable.ALL) {
            if (s.defaultText() == null) {
                continue; // an alias (limits.default: unlimited), written as the section it stands for
            }
            Object written = conf.get(s.key());
            if (written == null) {
                String leaf = s.key().substring(s.key().lastIndexOf('.') + 1);
                boolean absentByDefault = s.defaultValue() == null || s.defaultValue() instanceof List<?> l && l.isEmpty();
                assertTrue(absentByDefault && Pattern.compile("(?m)^\\s*#\\s*" + Pattern.quote(leaf) + ":").matcher(text).find(),
                        s.key() + ": neither set in conf/sluice.yml nor shown there commented out (default " + s.defaultText() + ")");
                continue;
            }
            List<String> values = new ArrayList<>();
            if (written instanceof List<?> list) {
                list.forEach(v -> values.add(String.valueOf(v)));
            } else {
                values.add(String.valueOf(written));
            }
            assertEquals(s.defaultValue(), s.parse(values), s.key() + " in conf/sluice.yml is not its default");
        }
        for (String key : conf.keySet()) {
            assertNotNull(SettingTable.byKey(key), "conf/sluice.yml sets " + key + ", which is no setting");
        }
    }

    @Test
    void everyKeyIsOneTheBuilderTakes() {
        for (Setting<?> s : SettingTable.ALL) {
            assertEquals(s, SettingTable.byKey(s.key()));
            assertTrue(Settings.Builder.KEYS.contains(s.key()), s.key());
        }
    }

    private static void flatten(String prefix, Map<?, ?> map, Map<String, Object> out) {
        for (Map.Entry<?, ?> e : map.entrySet()) {
            String key = prefix + e.getKey();
            if (e.getValue() instanceof Map<?, ?> nested && !key.equals("limits.domains")) {
                flatten(key + ".", nested, out);
            } else if (!key.equals("limits.domains")) {
                out.put(key, e.getValue());
            }
        }
    }
}
