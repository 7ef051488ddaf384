package io.sluice.domain;

import java.util.Arrays;

/**
 * A registrable domain as a map key: immutable, lower-cased wire-format bytes and their hash.
 * Equal to a {@link DomainProbe} holding the same bytes, so that maps can be searched with a probe
 * and a key is only made for a domain seen for the first time.
 */
public final class DomainKey implements Comparable<DomainKey> {
    private final byte[] bytes;
    private final int hash;

    DomainKey(byte[] bytes, int hash) {
        this.bytes = bytes;
        this.hash = hash;
    }

    /** The key for a presentation-format name such as {@code example.co.uk}. */
    public static DomainKey of(String name) {
        byte[] b = DomainBytes.fromText(name);
        return new DomainKey(b, DomainProbe.hashOf(b, b.length));
    }

    boolean sameBytes(byte[] other, int length) {
        return Arrays.equals(bytes, 0, bytes.length, other, 0, length);
    }

    @Override
    public boolean equals(Object o) {
        if (o instanceof DomainKey k) {
            return hash == k.hash && Arrays.equals(bytes, k.bytes);
        }
        return o instanceof DomainProbe p && p.equals(this);
    }

    @Override
    public int hashCode() {
        return hash;
    }

    /** Orders keys so that a map bin full of colliding hashes can still be searched as a tree. */
    @Override
    public int compareTo(DomainKey o) {
        return Arrays.compare(bytes, o.bytes);
    }

    @Override
    public String toString() {
        return DomainBytes.toText(bytes, bytes.length);
    }
}
