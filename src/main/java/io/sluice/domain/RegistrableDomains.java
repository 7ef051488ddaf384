package io.sluice.domain;

import io.netty.buffer.ByteBuf;
import io.sluice.wire.Names;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reduces a query name to its registrable domain by the Public Suffix List algorithm
 * (publicsuffix.org/list): the longest matching rule wins, an exception rule beats any other, and
 * an unknown top-level domain is a public suffix by the default rule {@code *}. The registrable
 * domain is the public suffix plus one label; a name that is itself a public suffix, and the root,
 * count as themselves. Names are read as octets, so labels Guava's {@code InternetDomainName} would
 * reject ({@code _dmarc}, any octet at all) reduce by the same label positions.
 *
 * <p>Runs for every query: the name is copied once into the probe's array and lower-cased there;
 * its suffixes are then looked up right to left with a hash extended label by label. Nothing is
 * allocated.
 */
public final class RegistrableDomains {
    private final SuffixRules rules;

    private RegistrableDomains(SuffixRules rules) {
        this.rules = rules;
    }

    /** The list bundled with Guava. */
    public static RegistrableDomains fromGuava() {
        return new RegistrableDomains(GuavaSuffixList.load());
    }

    /**
     * A list file in the publicsuffix.org format (both the ICANN and the private sections are used).
     *
     * @throws IOException when it cannot be read or a line is not a valid rule
     */
    public static RegistrableDomains fromFile(Path file) throws IOException {
        SuffixRules.Builder b = new SuffixRules.Builder();
        int lineNumber = 0;
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            lineNumber++;
            String rule = line.strip();
            int space = rule.indexOf(' ');
            rule = space < 0 ? rule : rule.substring(0, space); // the format ends a rule at white space
            if (rule.isEmpty() || rule.startsWith("//")) {
                continue;
            }
            try {
                b.add(rule);
            } catch (IllegalArgumentException e) {
                throw new IOException("line " + lineNumber + ": " + e.getMessage());
            }
        }
        SuffixRules rules = b.build();
        if (rules.size() == 0) {
            throw new IOException("no rules in it");
        }
        return new RegistrableDomains(rules);
    }

    /** Number of suffixes in the table (rules and their tails). */
    public int size() {
        return rules.size();
    }

    /**
     * Puts the registrable domain of the uncompressed, well-formed wire name {@code buf[from, to)}
     * ({@code to} just past its root label, as the query's parse found it) into {@code out}.
     */
    public void reduce(ByteBuf buf, int from, int to, DomainProbe out) {
        int length = to - from - 1; // the root label is implied
        buf.getBytes(from, out.bytes, 0, length);
        reduceInPlace(out, length);
    }

    /** The registrable domain of a presentation-format name, for configuration and tests. */
    public String reduce(String name) {
        DomainProbe p = new DomainProbe();
        reduce(name, p);
        return p.toString();
    }

    /**
     * Puts the registrable domain of a presentation-format name into {@code out}.
     *
     * @throws IllegalArgumentException when the name has an empty or over-long label
     */
    public void reduce(String name, DomainProbe out) {
        byte[] wire = DomainBytes.fromText(name);
        System.arraycopy(wire, 0, out.bytes, 0, wire.length);
        reduceInPlace(out, wire.length);
    }

    private void reduceInPlace(DomainProbe out, int length) {
        byte[] b = out.bytes;
        int[] starts = out.labelStarts;
        int labels = 0;
        for (int i = 0; i < length; i += (b[i] & 0xFF) + 1) {
            starts[labels++] = i;
        }
        // Length octets are at most 63, below 'A', so lower-casing every octet is safe.
        for (int i = 0; i < length; i++) {
            b[i] = Names.lower(b[i]);
        }
        int suffix = Math.min(1, labels); // the default rule: the last label
        long h = SuffixRules.SEED;
        int labelEnd = length;
        for (int k = 1; k <= labels; k++) {
            int from = starts[labels - k];
            h = DomainBytes.hashBackwards(h, b, from, labelEnd);
            labelEnd = from;
            int flags = rules.flags(h, b, from, length);
            if (flags == SuffixRules.ABSENT) {
                break;
            }
            if ((flags & SuffixRules.EXCEPTION) != 0) {
                suffix = k - 1;
                break;
            }
            if ((flags & SuffixRules.EXACT) != 0) {
                suffix = Math.max(suffix, k);
            }
            if ((flags & SuffixRules.WILDCARD) != 0 && k < labels) {
                suffix = Math.max(suffix, k + 1);
            }
        }
        int keep = Math.min(labels, suffix + 1);
        int start = keep == 0 ? length : starts[labels - keep];
        System.arraycopy(b, start, b, 0, length - start);
        out.length = length - start;
        out.seal();
    }
}
