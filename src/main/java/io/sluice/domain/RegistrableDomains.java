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
    /** Reverse names count per network of these many bits unless told otherwise: a /24, a /48. */
    public static final int DEFAULT_IPV4_PREFIX = 24;
    public static final int DEFAULT_IPV6_PREFIX = 48;
    /** The tails of reverse names, in wire form, lower case. */
    private static final byte[] IN_ADDR_ARPA = DomainBytes.fromText("in-addr.arpa");
    private static final byte[] IP6_ARPA = DomainBytes.fromText("ip6.arpa");

    private final SuffixRules rules;
    /** Labels kept under in-addr.arpa and under ip6.arpa: one per octet, one per nibble of the prefix. */
    private final int ipv4Labels;
    private final int ipv6Labels;

    private RegistrableDomains(SuffixRules rules, int ipv4Labels, int ipv6Labels) {
        this.rules = rules;
        this.ipv4Labels = ipv4Labels;
        this.ipv6Labels = ipv6Labels;
    }

    /**
     * These rules with reverse names counted per network: under {@code in-addr.arpa} per
     * {@code ipv4Prefix} bits, under {@code ip6.arpa} per {@code ipv6Prefix} bits. The Public
     * Suffix List makes {@code 192.in-addr.arpa} the domain of every PTR under 192.0.0.0/8; the
     * default (24 and 48 bits) is what one operator usually delegates.
     */
    public RegistrableDomains withReversePrefixes(int ipv4Prefix, int ipv6Prefix) {
        return new RegistrableDomains(rules, ipv4Prefix / 8, ipv6Prefix / 4);
    }

    /** The list bundled with Guava. */
    public static RegistrableDomains fromGuava() {
        return new RegistrableDomains(GuavaSuffixList.load(), DEFAULT_IPV4_PREFIX / 8, DEFAULT_IPV6_PREFIX / 4);
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
        return new RegistrableDomains(rules, DEFAULT_IPV4_PREFIX / 8, DEFAULT_IPV6_PREFIX / 4);
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
        Names.lower(b, 0, length);
        int reverse = endsWith(b, length, IN_ADDR_ARPA) ? ipv4Labels : endsWith(b, length, IP6_ARPA) ? ipv6Labels : -1;
        if (reverse >= 0) {
            keep(out, starts, labels, length, Math.min(labels, reverse + 2)); // the network's labels, then in-addr.arpa
            return;
        }
        int suffix = Math.min(1, labels); // the default rule: the last label
        long h = SuffixRules.SEED;
        int labelEnd = length;
        for (int k = 1; k <= labels; k++) {
            int from = starts[labels - k];
            h = DomainBytes.hashLabel(h, b, from, labelEnd);
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
        keep(out, starts, labels, length, Math.min(labels, suffix + 1));
    }

    /** Keeps the last {@code keep} labels of the name in {@code out}. */
    private static void keep(DomainProbe out, int[] starts, int labels, int length, int keep) {
        byte[] b = out.bytes;
        int start = keep == 0 ? length : starts[labels - keep];
        System.arraycopy(b, start, b, 0, length - start);
        out.length = length - start;
        out.seal();
    }

    /** Whether the (lower-cased) wire name {@code b[0, length)} ends with the labels of {@code tail}. */
    private static boolean endsWith(byte[] b, int length, byte[] tail) {
        int from = length - tail.length;
        if (from < 0) {
            return false;
        }
        for (int i = tail.length - 1; i >= 0; i--) { // from the end: most names differ at once
            if (b[from + i] != tail[i]) {
                return false;
            }
        }
        return from == 0 || isLabelStart(b, from);
    }

    /** Whether a label starts at {@code at}, walking the labels from the start. */
    private static boolean isLabelStart(byte[] b, int at) {
        int i = 0;
        while (i < at) {
            i += (b[i] & 0xFF) + 1;
        }
        return i == at;
    }
}
