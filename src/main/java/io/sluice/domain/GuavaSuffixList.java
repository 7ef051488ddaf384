package io.sluice.domain;

import com.google.thirdparty.publicsuffix.PublicSuffixPatterns;
import com.google.thirdparty.publicsuffix.PublicSuffixTrie;
import java.lang.reflect.Field;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * Reads the rules of the Public Suffix List that ships inside Guava.
 *
 * <p>Guava 33.8 keeps the list only as a compact trie behind {@code InternetDomainName}; neither
 * gives the rules themselves, and calling {@code InternetDomainName} per query costs a String per
 * label (docs/benchmarks.md, "Name reduction (JMH)"). So the trie is read once, at start: three
 * chars per node (offset of its label in the string pool, index of its first child, and a word of
 * child count and flags), the label as a length char followed by its chars. Tests check the result against
 * {@code InternetDomainName} for every rule, so a Guava upgrade that changes the layout fails the
 * build rather than a forwarder.
 */
final class GuavaSuffixList {
    private GuavaSuffixList() {
    }

    private static final int NODE_CHARS = 3;
    private static final int CHILDREN_MASK = 0x7FF;
    private static final int EXCLUSION_BIT = 11;
    private static final int WILDCARD_SHIFT = 12;
    private static final int EXACT_SHIFT = 14;
    private static final int TYPE_MASK = 3;

    static SuffixRules load() {
        SuffixRules.Builder b = new SuffixRules.Builder();
        for (String rule : rules()) {
            b.add(rule);
        }
        return b.build();
    }

    /** The rules as the list writes them: {@code co.uk}, {@code *.ck}, {@code !www.ck}. */
    static List<String> rules() {
        CharSequence trie;
        CharSequence pool;
        try {
            trie = (CharSequence) field("trieData").get(PublicSuffixPatterns.TRIE);
            pool = (CharSequence) field("stringPool").get(PublicSuffixPatterns.TRIE);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot read the public suffix list inside this Guava version;"
                    + " give one with --public-suffix-list FILE", e);
        }
        List<String> rules = new ArrayList<>();
        addChildren(trie, pool, 0, new ArrayDeque<>(), rules);
        return rules;
    }

    private static void addChildren(CharSequence trie, CharSequence pool, int node, Deque<String> path,
                                    List<String> rules) {
        int first = trie.charAt(node * NODE_CHARS + 1);
        int count = trie.charAt(node * NODE_CHARS + 2) & CHILDREN_MASK;
        for (int child = first; child < first + count; child++) {
            int labelAt = trie.charAt(child * NODE_CHARS);
            int bits = trie.charAt(child * NODE_CHARS + 2);
            int length = pool.charAt(labelAt);
            StringBuilder label = new StringBuilder(length);
            for (int i = 0; i < length; i++) {
                label.append(pool.charAt(labelAt + 1 + i)); // the pool does not support subSequence
            }
            path.addFirst(label.toString());
            String name = String.join(".", path);
            if (((bits >> EXACT_SHIFT) & TYPE_MASK) != 0) {
                rules.add(name);
            }
            if (((bits >> WILDCARD_SHIFT) & TYPE_MASK) != 0) {
                rules.add("*." + name);
            }
            if (((bits >> EXCLUSION_BIT) & 1) != 0) {
                rules.add("!" + name);
            }
            addChildren(trie, pool, child, path, rules);
            path.removeFirst();
        }
    }

    private static Field field(String name) throws NoSuchFieldException {
        Field f = PublicSuffixTrie.class.getDeclaredField(name);
        f.setAccessible(true);
        return f;
    }
}
