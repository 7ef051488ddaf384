package io.sluice.stress;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Writes the queries of a run: the targets in turn (or the lines of a dnsperf-style query file),
 * optionally under a fresh random label each time, RD set unless iterative.
 */
final class QueryMaker {
    private static final char[] HEX = "0123456789abcdef".toCharArray();
    private static final int RANDOM_LABEL_CHARS = 12;

    private final byte[][] names;
    private final int[] types;
    private final boolean randomSubdomain;
    private final boolean recursionDesired;
    private final SplittableRandom random = new SplittableRandom();
    private int next;

    private QueryMaker(byte[][] names, int[] types, boolean randomSubdomain, boolean recursionDesired) {
        this.names = names;
        this.types = types;
        this.randomSubdomain = randomSubdomain;
        this.recursionDesired = recursionDesired;
    }

    /** The targets, each asked for its A record. */
    static QueryMaker ofTargets(List<String> targets, boolean randomSubdomain, boolean rd) {
        byte[][] names = new byte[targets.size()][];
        int[] types = new int[targets.size()];
        for (int i = 0; i < names.length; i++) {
            names[i] = wire(targets.get(i));
            types[i] = 1;
        }
        return new QueryMaker(names, types, randomSubdomain, rd);
    }

    /**
     * dnsperf's format: one {@code name type} per line, {@code #} starts a comment.
     *
     * @throws IllegalArgumentException naming the line that cannot be used
     */
    static QueryMaker ofFile(Path file, boolean randomSubdomain, boolean rd) throws IOException {
        List<byte[]> names = new ArrayList<>();
        List<Integer> types = new ArrayList<>();
        int n = 0;
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            n++;
            String l = line.strip();
            if (l.isEmpty() || l.startsWith("#")) {
                continue;
            }
            String[] parts = l.split("\\s+");
            try {
                names.add(wire(parts[0]));
                types.add(parts.length > 1 ? QueryTypes.code(parts[1]) : 1);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(file + " line " + n + ": " + e.getMessage());
            }
        }
        if (names.isEmpty()) {
            throw new IllegalArgumentException(file + ": no queries in it");
        }
        return new QueryMaker(names.toArray(new byte[0][]), types.stream().mapToInt(Integer::intValue).toArray(),
                randomSubdomain, rd);
    }

    /** Writes the next query with message ID {@code id} into {@code out}. */
    void write(ByteBuf out, int id) {
        int i = next;
        next = next + 1 == names.length ? 0 : next + 1;
        out.writeShort(id);
        out.writeShort(recursionDesired ? 0x0100 : 0);
        out.writeShort(1);
        out.writeZero(6);
        if (randomSubdomain) {
            out.writeByte(RANDOM_LABEL_CHARS);
            long r = random.nextLong();
            for (int c = 0; c < RANDOM_LABEL_CHARS; c++, r >>>= 4) {
                out.writeByte(HEX[(int) (r & 15)]);
            }
        }
        out.writeBytes(names[i]);
        out.writeShort(types[i]);
        out.writeShort(1);
    }

    /** Presentation name to wire form, root label included. */
    static byte[] wire(String name) {
        String n = name.endsWith(".") ? name.substring(0, name.length() - 1) : name;
        if (n.isEmpty()) {
            return new byte[] {0};
        }
        byte[] out = new byte[n.length() + 2];
        int at = 0;
        for (String label : n.split("\\.", -1)) {
            byte[] b = label.getBytes(StandardCharsets.US_ASCII);
            if (b.length == 0 || b.length > 63) {
                throw new IllegalArgumentException("'" + name + "' is not a valid name");
            }
            out[at++] = (byte) b.length;
            System.arraycopy(b, 0, out, at, b.length);
            at += b.length;
        }
        out[at] = 0;
        return out;
    }

    /** A few query types by name, as dnsperf files write them. */
    static final class QueryTypes {
        private QueryTypes() {
        }

        static int code(String name) {
            return switch (name.toUpperCase(Locale.ROOT)) {
                case "A" -> 1;
                case "NS" -> 2;
                case "CNAME" -> 5;
                case "SOA" -> 6;
                case "PTR" -> 12;
                case "MX" -> 15;
                case "TXT" -> 16;
                case "AAAA" -> 28;
                case "SRV" -> 33;
                case "DS" -> 43;
                case "DNSKEY" -> 48;
                case "HTTPS" -> 65;
                case "ANY" -> 255;
                default -> {
                    if (name.toUpperCase(Locale.ROOT).startsWith("TYPE")) {
                        yield Integer.parseInt(name.substring(4));
                    }
                    throw new IllegalArgumentException("unknown query type '" + name + "'");
                }
            };
        }
    }
}
