package io.sluice.domain;

import io.sluice.wire.Names;
import io.sluice.wire.Wire;
import java.util.Arrays;

/**
 * Domain names as sluice keys them: wire-format labels (length octet, then the octets), lower-cased,
 * without the root label's zero octet. The root is the empty array.
 */
public final class DomainBytes {
    private DomainBytes() {
    }

    private static final long FNV_PRIME = 0x100000001b3L;

    /** FNV-1a over {@code bytes[from, to)}, read from the end backwards, starting from {@code h}. */
    static long hashBackwards(long h, byte[] bytes, int from, int to) {
        for (int i = to - 1; i >= from; i--) {
            h = (h ^ (bytes[i] & 0xFF)) * FNV_PRIME;
        }
        return h;
    }

    /** Mixes a 64-bit hash down to a well-spread 32-bit one (the murmur3 finaliser). */
    static int spread(long h) {
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return (int) h;
    }

    /**
     * Parses a presentation-format name ({@code Example.COM.}, {@code \.} and {@code \DDD} escapes)
     * into key bytes.
     *
     * @throws IllegalArgumentException when a label is empty or longer than 63 octets, or the name
     *                                  longer than 255 octets on the wire
     */
    public static byte[] fromText(String text) {
        String s = text.endsWith(".") && !text.endsWith("\\.") ? text.substring(0, text.length() - 1) : text;
        if (s.isEmpty()) {
            return new byte[0];
        }
        byte[] out = new byte[s.length() + 1];
        int n = 0;
        int lengthAt = n++;
        int labelLength = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            int b;
            if (c == '.') {
                checkLabel(labelLength, text);
                out[lengthAt] = (byte) labelLength;
                lengthAt = n++;
                labelLength = 0;
                continue;
            } else if (c == '\\' && i + 3 < s.length() && Character.isDigit(s.charAt(i + 1))) {
                b = Integer.parseInt(s.substring(i + 1, i + 4));
                i += 3;
            } else if (c == '\\' && i + 1 < s.length()) {
                b = s.charAt(++i);
            } else {
                b = c;
            }
            if (b > 0xFF) {
                throw new IllegalArgumentException("'" + text + "' is not ASCII; write it in its xn-- form");
            }
            out[n++] = Names.lower((byte) b);
            labelLength++;
        }
        checkLabel(labelLength, text);
        out[lengthAt] = (byte) labelLength;
        if (n + 1 > Wire.MAX_NAME_BYTES) { // with the root's zero octet
            throw new IllegalArgumentException("'" + text + "' is longer than 255 octets");
        }
        return Arrays.copyOf(out, n);
    }

    private static void checkLabel(int length, String text) {
        if (length == 0 || length > 63) {
            throw new IllegalArgumentException("'" + text + "' has an empty or over-long label");
        }
    }

    /** The most bytes {@link #writeText} writes: every octet of a 255-octet name as {@code \DDD}. */
    public static final int MAX_TEXT = 4 * 255;

    /** Presentation format, lower case, no trailing dot; the root is ".". */
    public static String toText(byte[] key, int length) {
        byte[] text = new byte[Math.max(1, 4 * length)];
        return new String(text, 0, writeText(key, length, text, 0), java.nio.charset.StandardCharsets.US_ASCII);
    }

    /**
     * Writes {@link #toText}'s text of the wire name {@code key[0, length)} into {@code out} from
     * {@code at}, in ASCII, allocating nothing; returns where it ends. {@code out} needs room for
     * {@link #MAX_TEXT} bytes.
     */
    public static int writeText(byte[] key, int length, byte[] out, int at) {
        if (length == 0) {
            out[at] = '.';
            return at + 1;
        }
        int start = at;
        int i = 0;
        while (i < length) {
            int len = key[i++] & 0xFF;
            if (at > start) {
                out[at++] = '.';
            }
            for (int j = 0; j < len; j++) {
                int b = key[i++] & 0xFF;
                if (b == '.' || b == '\\') {
                    out[at++] = '\\';
                    out[at++] = (byte) b;
                } else if (b <= 0x20 || b >= 0x7F) {
                    out[at++] = '\\';
                    out[at++] = (byte) ('0' + b / 100);
                    out[at++] = (byte) ('0' + b / 10 % 10);
                    out[at++] = (byte) ('0' + b % 10);
                } else {
                    out[at++] = (byte) b;
                }
            }
        }
        return at;
    }
}
