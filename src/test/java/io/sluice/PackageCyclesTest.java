package io.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * No two packages of sluice use each other, directly or through others, the root package
 * included: a package's README can then say what it needs, and a feature's package can be read,
 * tested and removed from the bottom up. Uses are read from the sources: imports, and names
 * written out in full in code (a comment's mention is no use).
 */
class PackageCyclesTest {
    private static final Path SOURCES = Path.of("src/main/java");
    private static final Pattern USE = Pattern.compile("\\b(io\\.sluice(?:\\.[a-z0-9_]+)*)\\.[A-Z]");
    private static final Pattern COMMENT = Pattern.compile("/\\*.*?\\*/|//[^\\n]*", Pattern.DOTALL);

    @Test
    void noPackageUsesOneThatUsesIt() throws IOException {
        Map<String, Set<String>> uses = uses();
        List<String> cycles = new ArrayList<>();
        for (List<String> component : stronglyConnected(uses)) {
            if (component.size() > 1) {
                List<String> edges = new ArrayList<>();
                for (String from : component) {
                    for (String to : uses.get(from)) {
                        if (component.contains(to)) {
                            edges.add(from + " -> " + to);
                        }
                    }
                }
                cycles.add(String.join(", ", edges));
            }
        }
        assertEquals(List.of(), cycles);
    }

    private static Map<String, Set<String>> uses() throws IOException {
        Map<String, Set<String>> uses = new TreeMap<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                String pkg = SOURCES.relativize(f.getParent()).toString().replace('/', '.');
                Set<String> out = uses.computeIfAbsent(pkg, k -> new TreeSet<>());
                Matcher m = USE.matcher(COMMENT.matcher(Files.readString(f)).replaceAll(""));
                while (m.find()) {
                    if (!m.group(1).equals(pkg)) {
                        out.add(m.group(1));
                    }
                }
            }
        }
        uses.values().forEach(s -> s.retainAll(uses.keySet()));
        return uses;
    }

    /** Tarjan's strongly connected components. */
    private static List<List<String>> stronglyConnected(Map<String, Set<String>> graph) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        List<List<String>> out = new ArrayList<>();
        for (String v : graph.keySet()) {
            if (!index.containsKey(v)) {
                visit(v, graph, index, low, stack, out);
            }
        }
        return out;
    }

    private static void visit(String v, Map<String, Set<String>> graph, Map<String, Integer> index,
                              Map<String, Integer> low, Deque<String> stack, List<List<String>> out) {
        index.put(v, index.size());
        low.put(v, index.get(v));
        stack.push(v);
        for (String w : graph.get(v)) {
            if (!index.containsKey(w)) {
                visit(w, graph, index, low, stack, out);
                low.put(v, Math.min(low.get(v), low.get(w)));
            } else if (stack.contains(w)) {
                low.put(v, Math.min(low.get(v), index.get(w)));
            }
        }
        if (low.get(v).equals(index.get(v))) {
            List<String> component = new ArrayList<>();
            String w;
            do {
                w = stack.pop();
                component.add(w);
            } while (!w.equals(v));
            out.add(component);
        }
    }
}
