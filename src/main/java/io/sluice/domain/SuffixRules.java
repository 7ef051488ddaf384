package io.sluice.domain;

import java.net.IDN;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * Public Suffix List rules as a flat hash table keyed by every suffix that is a rule or the tail of
 * one ({@code uk}, {@code co.uk}), so that a name's suffixes can be looked up right to left by a
 * hash carried from one label to the next, with no string built.
 *
 * <p>Immutable once built; read by every event loop at once.
 */
final class SuffixRules {
    /** The suffix is a tail of some longer rule but not a rule itself. */
    static final int NODE = 0;
    /** The suffix is a public suffix ({@code co.uk}). */
    static final int EXACT = 1;
    /** Every one-label extension of the suffix is a public suffix ({@code *.ck}). */
    static final int WILDCARD = 2;
    /** The suffix is excepted from a wildcard: its parent is the public suffix ({@code !www.ck}). */
    static final int EXCEPTION = 4;
    static final int ABSENT = -1;

    /** Hash seed of rule lookups; the bytes are always compared, so it need not be secret. */
    static final long SEED = 0xcbf29ce484222325L;

    private final long[] hashes;
    private final byte[][] keys;
    private final byte[] flags;
    private final int mask;
    private final int size;

    private SuffixRules(long[] hashes, byte[][] keys, byte[] flags, int size) {
        this.hashes = hashes;
        this.keys = keys;
        this.flags = flags;
        this.mask = hashes.length - 1;
        this.size = size;
    }

    int size() {
        return size;
    }

    /**
     * Flags of the suffix {@code name[from, to)} whose backward hash is {@code hash}, or
     * {@link #ABSENT} when no rule ends in it.
     */
    int flags(long hash, byte[] name, int from, int to) {
        for (int i = DomainBytes.spread(hash) & mask; ; i = (i + 1) & mask) {
            byte[] key = keys[i];
            if (key == null) {
                return ABSENT;
            }
            if (hashes[i] == hash && Arrays.equals(key, 0, key.length, name, from, to)) {
                return flags[i];
            }
        }
    }

    /** Collects rules written as in the list: {@code co.uk}, {@code *.ck}, {@code !www.ck}. */
    static final class Builder {
        private final Map<ByteBuffer, Integer> entries = new HashMap<>();

        /**
         * Adds one rule.
         *
         * @throws IllegalArgumentException when the rule is not a valid name
         */
        Builder add(String rule) {
            String r = rule.trim();
            int flag = EXACT;
            if (r.startsWith("!")) {
                flag = EXCEPTION;
                r = r.substring(1);
            } else if (r.equals("*")) {
                return this; // the default rule; always applied
            } else if (r.startsWith("*.")) {
                flag = WILDCARD;
                r = r.substring(2);
            }
            if (r.contains("*")) {
                throw new IllegalArgumentException("wildcard inside '" + rule + "' is not supported");
            }
            byte[] name = DomainBytes.fromText(IDN.toASCII(r, IDN.ALLOW_UNASSIGNED));
            int start = 0;
            while (start < name.length) {
                byte[] tail = Arrays.copyOfRange(name, start, name.length);
                entries.merge(ByteBuffer.wrap(tail), start == 0 ? flag : NODE, (a, b) -> a | b);
                start += (name[start] & 0xFF) + 1;
            }
            return this;
        }

        /** The hash {@link RegistrableDomains} extends label by label from the right, of a whole suffix. */
        private static long hash(byte[] suffix) {
            int[] starts = new int[suffix.length];
            int labels = 0;
            for (int i = 0; i < suffix.length; i += (suffix[i] & 0xFF) + 1) {
                starts[labels++] = i;
            }
            long h = SEED;
            int end = suffix.length;
            for (int k = labels - 1; k >= 0; k--) {
                h = DomainBytes.hashLabel(h, suffix, starts[k], end);
                end = starts[k];
            }
            return h;
        }

        SuffixRules build() {
            int capacity = Integer.highestOneBit(Math.max(16, entries.size() * 3)) * 2;
            long[] hashes = new long[capacity];
            byte[][] keys = new byte[capacity][];
            byte[] flags = new byte[capacity];
            int mask = capacity - 1;
            for (var e : entries.entrySet()) {
                byte[] key = e.getKey().array();
                long h = hash(key);
                int i = DomainBytes.spread(h) & mask;
                while (keys[i] != null) {
                    i = (i + 1) & mask;
                }
                keys[i] = key;
                hashes[i] = h;
                flags[i] = (byte) (int) e.getValue();
            }
            return new SuffixRules(hashes, keys, flags, entries.size());
        }
    }
}
