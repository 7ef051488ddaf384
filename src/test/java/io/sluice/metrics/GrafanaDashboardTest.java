package io.sluice.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * conf/grafana-dashboard.json asks only for what sluice exports: every metric name in its
 * expressions is a family of docs/metrics.md (which MetricsReferenceTest holds to the running
 * servers), a histogram's by its _bucket, _sum or _count series.
 */
class GrafanaDashboardTest {
    private static final Pattern FAMILY_ROW = Pattern.compile("(?m)^\\| `(sluice_[a-z_]+)` \\| (counter|gauge|histogram) \\|");
    private static final Pattern METRIC = Pattern.compile("\\bsluice_[a-z_]+");

    @Test
    void everyExpressionNamesAnExportedFamily() throws Exception {
        Map<String, String> families = new HashMap<>();
        Matcher row = FAMILY_ROW.matcher(Files.readString(Path.of("docs/metrics.md")));
        while (row.find()) {
            families.put(row.group(1), row.group(2));
        }
        assertTrue(families.size() > 40, "docs/metrics.md lists the families: " + families.size());

        JsonNode dashboard = new ObjectMapper().readTree(Path.of("conf/grafana-dashboard.json").toFile());
        List<String> expressions = new ArrayList<>();
        collect(dashboard, expressions);
        assertTrue(expressions.size() > 30, "expressions found: " + expressions.size());
        List<String> unknown = new ArrayList<>();
        for (String e : expressions) {
            Matcher m = METRIC.matcher(e);
            boolean any = false;
            while (m.find()) {
                any = true;
                if (!exported(m.group(), families)) {
                    unknown.add(m.group() + " in " + e);
                }
            }
            assertTrue(any, "an expression without a sluice metric: " + e);
            assertEquals(count(e, '('), count(e, ')'), "unbalanced parentheses: " + e);
        }
        assertEquals(List.of(), unknown);
    }

    @Test
    void everyPanelUsesTheDashboardsDataSource() throws Exception {
        JsonNode dashboard = new ObjectMapper().readTree(Path.of("conf/grafana-dashboard.json").toFile());
        for (JsonNode panel : dashboard.get("panels")) {
            if (!panel.get("type").asText().equals("row")) {
                assertEquals("${datasource}", panel.at("/datasource/uid").asText(), panel.get("title").asText());
            }
        }
    }

    private static boolean exported(String name, Map<String, String> families) {
        if (families.containsKey(name)) {
            return true;
        }
        for (String suffix : List.of("_bucket", "_sum", "_count")) {
            if (name.endsWith(suffix) && "histogram".equals(families.get(name.substring(0, name.length() - suffix.length())))) {
                return true;
            }
        }
        return false;
    }

    /** Every PromQL expression: panels' targets and the template variables' queries. */
    private static void collect(JsonNode node, List<String> out) {
        if (node.isObject()) {
            node.fields().forEachRemaining(f -> {
                if ((f.getKey().equals("expr") || f.getKey().equals("definition")) && f.getValue().isTextual()) {
                    out.add(f.getValue().asText());
                } else {
                    collect(f.getValue(), out);
                }
            });
        } else if (node.isArray()) {
            node.forEach(n -> collect(n, out));
        }
    }

    private static long count(String s, char c) {
        return s.chars().filter(x -> x == c).count();
    }
}
