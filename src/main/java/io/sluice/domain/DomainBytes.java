package io.sluice.domain;

import io.sluice.wire.Names;
import io.sluice.wire.Wire;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Domain names as sluice keys them: wire-format labels (length octet, then the octets), lower-cased,
 * without the root label's zero octet. The root is the empty array.
 */
public final class DomainBytes {
    private DomainBytes() {
    }

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    /** An odd 64-bit constant (the golden ratio's): multiplying by it is a bijection. */
    private static final long MIX = 0x9E3779B97F4A7C15L;

    /**
     * Extends {@code h} by one label, {@code bytes[from, to)} with its length octet: eight octets a
     * step, so that a suffix's hash is extended label by label, right to left, as the suffix list
     * is searched. A multiply a step rather than FNV's one a byte: the chain of multiplies is what
     * a reduction waits on (docs/benchmarks.md, "Name reduction (JMH)").
     */
    static long hashLabel(long h, byte[] bytes, int from, int to) {
        for (int i = from; i < to; i += Long.BYTES) {
            h = (h ^ word(bytes, i, to)) * MIX;
            h ^= h >>> 32;
        }
        return h;
    }

    /**
     * The octets {@code bytes[at, to)}, at most eight, as a little-endian long, zero past
     * {@code to}: read whole when the array has eight octets there.
     */
    static long word(byte[] bytes, int at, int to) {
        int valid = to - at;
        if (valid <= 0) {
            return 0;
        }
        if (at + Long.BYTES <= bytes.length) {
            long w = (long) LONGS.get(bytes, at);
            return valid >= Long.BYTES ? w : w & ((1L << (valid * 8)) - 1);
        }
        long w = 0;
        for (int i = Math.min(valid, Long.BYTES) - 1; i >= 0; i--) {
            w = w << 8 | (bytes[at + i] & 0xFF);
        }
        return w;
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
