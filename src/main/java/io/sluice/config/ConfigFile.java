package io.sluice.config;

import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.composer.Composer;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;
import org.snakeyaml.engine.v2.parser.ParserImpl;
import org.snakeyaml.engine.v2.scanner.StreamReader;

/**
 * Reads the YAML configuration file into a {@link Settings.Builder}. Errors name the file, the line
 * and the key. The file is composed into nodes rather than bound to objects so that every value
 * keeps its line number.
 */
public final class ConfigFile {
    private ConfigFile() {
    }

    public static void apply(Path file, Settings.Builder builder) throws ConfigException {
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            apply(reader, file.toString(), builder);
        } catch (IOException e) {
            throw new ConfigException(file + ": cannot read: " + e.getMessage());
        }
    }

    /** {@link #apply(Path, Settings.Builder)} for YAML text; {@code label} names it in errors as a file would be. */
    public static void apply(String yaml, String label, Settings.Builder builder) throws ConfigException {
        apply(new StringReader(yaml), label, builder);
    }

    private static void apply(Reader reader, String file, Settings.Builder builder) throws ConfigException {
        Node root;
        try {
            LoadSettings settings = LoadSettings.builder().setLabel(file).build();
            Composer composer = new Composer(settings, new ParserImpl(settings, new StreamReader(settings, reader)));
            Optional<Node> single = composer.getSingleNode();
            if (single.isEmpty()) {
                return; // an empty file: all defaults
            }
            root = single.get();
        } catch (MarkedYamlEngineException e) {
            String line = e.getProblemMark().map(m -> " line " + (m.getLine() + 1)).orElse("");
            throw new ConfigException(file + line + ": not valid YAML: " + e.getProblem());
        } catch (YamlEngineException e) {
            throw new ConfigException(file + ": not valid YAML: " + e.getMessage());
        } catch (IllegalArgumentException e) {
            // SnakeYAML Engine's composer throws this for a tag it cannot take (the fuzzer's
            // "!%E": a bad percent escape); found by ParsersFuzzTest#configLoader
            throw new ConfigException(file + ": not valid YAML: " + e.getMessage());
        }
        if (!(root instanceof MappingNode mapping)) {
            throw new ConfigException(file + line(root) + ": expected a mapping of settings");
        }
        applyMapping(file, "", mapping, builder);
    }

    /**
     * Mappings nest keys with dots ({@code limits.default.window}); these are the ones that may:
     * every key's every prefix ending before a dot, as the table of settings has them.
     */
    private static final Set<String> SECTIONS = sections();
    private static final String DOMAINS = "limits.domains";

    private static Set<String> sections() {
        Set<String> out = new HashSet<>();
        for (Setting<?> setting : SettingTable.ALL) {
            String key = setting.key();
            for (int dot = key.indexOf('.'); dot > 0; dot = key.indexOf('.', dot + 1)) {
                out.add(key.substring(0, dot));
            }
        }
        return Set.copyOf(out);
    }

    /** The first key of section {@code section} with what its value looks like, to show the shape a section takes. */
    private static String sectionExample(String section) {
        for (Setting<?> s : SettingTable.ALL) {
            if (s.key().startsWith(section + ".") && s.key().indexOf('.', section.length() + 1) < 0) {
                return s.key().substring(section.length() + 1) + ": " + (s.label() != null ? s.label()
                        : s.defaultText() != null ? s.defaultText() : "...");
            }
        }
        return "...";
    }

    private static void applyMapping(String file, String prefix, MappingNode mapping, Settings.Builder builder)
            throws ConfigException {
        checkNoDuplicates(file, prefix, mapping);
        for (NodeTuple tuple : mapping.getValue()) {
            String key = prefix + scalar(tuple.getKeyNode());
            Node value = tuple.getValueNode();
            String where = file + line(tuple.getKeyNode()) + ": " + key;
            try {
                if (value instanceof MappingNode nested && SECTIONS.contains(key)) {
                    applyMapping(file, key + ".", nested, builder);
                } else if (SECTIONS.contains(key) && isEmpty(value)) {
                    continue; // "limits:" with nothing under it: the defaults
                } else if (SECTIONS.contains(key) && !Settings.Builder.KEYS.contains(key)) {
                    throw new ConfigException("expected a mapping of settings, such as " + key + ": { "
                            + sectionExample(key) + " }");
                } else if (key.equals(DOMAINS)) {
                    applyDomains(file, value, builder);
                } else if (!Settings.Builder.KEYS.contains(key)) {
                    throw new ConfigException(Settings.Builder.UNKNOWN_KEY + suggestion(key));
                } else {
                    builder.set(key, values(value), where);
                }
            } catch (ConfigException e) {
                throw e.getMessage().startsWith(file) ? e : e.at(where);
            }
        }
    }

    private static boolean isEmpty(Node node) {
        return node instanceof ScalarNode s && s.getValue().isEmpty();
    }

    /** YAML lets a key repeat and the last one win; in a configuration that hides a mistake. */
    private static void checkNoDuplicates(String file, String prefix, MappingNode mapping) throws ConfigException {
        Map<String, Node> seen = new HashMap<>();
        for (NodeTuple tuple : mapping.getValue()) {
            String key = scalar(tuple.getKeyNode());
            Node first = seen.putIfAbsent(key, tuple.getKeyNode());
            if (first != null) {
                throw new ConfigException(file + line(tuple.getKeyNode()) + ": " + prefix + key
                        + ": given twice (first at" + line(first) + ")");
            }
        }
    }

    /** "; did you mean limits?" when a known key or section is a few letters away, else nothing. */
    private static String suggestion(String key) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        List<String> known = new ArrayList<>(Settings.Builder.KEYS);
        known.addAll(SECTIONS);
        known.add(DOMAINS);
        for (String k : known) {
            int d = editDistance(key, k);
            if (d < bestDistance) {
                best = k;
                bestDistance = d;
            }
        }
        return bestDistance <= Math.max(2, key.length() / 5) ? "; did you mean " + best + "?" : "";
    }

    /** Levenshtein distance: the fewest one-character insertions, deletions and substitutions. */
    static int editDistance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitute = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitute, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] t = previous;
            previous = current;
            current = t;
        }
        return previous[b.length()];
    }

    /** {@code example.com: { queries: 10, window: 1s }} or {@code example.com: unlimited}. */
    private static void applyDomains(String file, Node value, Settings.Builder builder) throws ConfigException {
        if (!(value instanceof MappingNode domains)) {
            throw new ConfigException("expected a mapping of domain names");
        }
        checkNoDuplicates(file, DOMAINS + ".", domains);
        for (NodeTuple d : domains.getValue()) {
            String name = scalar(d.getKeyNode());
            String where = file + line(d.getKeyNode()) + ": " + DOMAINS + "." + name;
            try {
                if (d.getValueNode() instanceof MappingNode spec) {
                    checkNoDuplicates(file, DOMAINS + "." + name + ".", spec);
                    String queries = null;
                    String window = null;
                    for (NodeTuple t : spec.getValue()) {
                        String k = scalar(t.getKeyNode());
                        switch (k) {
                            case "queries" -> queries = one(t.getValueNode());
                            case "window" -> window = one(t.getValueNode());
                            default -> throw new ConfigException(Settings.Builder.UNKNOWN_KEY + " '" + k
                                    + "' (queries, window)");
                        }
                    }
                    if (queries == null) {
                        throw new ConfigException("needs 'queries'");
                    }
                    builder.domain(name, queries, window, where);
                } else if ("unlimited".equals(one(d.getValueNode()))) {
                    builder.domain(name, "unlimited", null, where);
                } else {
                    throw new ConfigException("expected 'unlimited' or { queries: N, window: DURATION }");
                }
            } catch (ConfigException e) {
                throw e.getMessage().startsWith(file) ? e : e.at(where);
            }
        }
    }

    private static String one(Node node) throws ConfigException {
        if (node instanceof ScalarNode s) {
            return s.getValue();
        }
        throw new ConfigException("expected a single value");
    }

    private static List<String> values(Node node) throws ConfigException {
        if (node instanceof ScalarNode s) {
            return List.of(s.getValue());
        }
        if (node instanceof SequenceNode seq) {
            List<String> out = new ArrayList<>();
            for (Node item : seq.getValue()) {
                if (!(item instanceof ScalarNode s)) {
                    throw new ConfigException("expected a list of plain values");
                }
                out.add(s.getValue());
            }
            return out;
        }
        throw new ConfigException("expected a value or a list");
    }

    private static String scalar(Node node) throws ConfigException {
        if (node instanceof ScalarNode s) {
            return s.getValue();
        }
        throw new ConfigException(line(node).strip() + ": expected a key name");
    }

    private static String line(Node node) {
        return node.getStartMark().map(Mark::getLine).map(l -> " line " + (l + 1)).orElse("");
    }
}
