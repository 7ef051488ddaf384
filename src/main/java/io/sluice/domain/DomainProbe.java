package io.sluice.domain;

import io.sluice.sketch.KeyedHash;

/**
 * The registrable domain of the query being decided: mutable and reused, one per event loop, so
 * that reducing a name and looking its counter up allocate nothing. Copied into a
 * {@link DomainKey} only when a domain is first tracked.
 */
public final class DomainProbe {
    /** The name; room for a client network's label ({@link #under}), and 8 spare bytes so that whole longs can always be read. */
    final byte[] bytes = new byte[255 + MAX_LABEL + 1 + 8];
    /** The longest label {@link #under} takes. */
    public static final int MAX_LABEL = 63;
    /** Start of each label of the name being reduced; scratch for {@link RegistrableDomains}. */
    final int[] labelStarts = new int[128];
    int length;
    int hash;
    /** The keyed 64-bit hash {@link #hash} is folded from: the counter table's bucket and fingerprint. */
    long hash64;

    /**
     * A probe holding {@code name} as it is (not reduced), e.g. {@code example.com}.
     *
     * @throws IllegalArgumentException when it is not a name: not ASCII, or over 255 octets
     */
    public static DomainProbe of(String name) {
        return ofWire(DomainBytes.fromText(name));
    }

    /** A probe holding {@code key}'s domain: for a domain kept past its query. */
    public static DomainProbe of(DomainKey key) {
        return ofWire(key.wire());
    }

    private static DomainProbe ofWire(byte[] wire) {
        DomainProbe p = new DomainProbe();
        System.arraycopy(wire, 0, p.bytes, 0, wire.length);
        p.length = wire.length;
        p.seal();
        return p;
    }

    /** Hashes the name: called once the bytes are final. */
    void seal() {
        hash64 = KeyedHash.of64(bytes, length); // keyed per process: no client can aim names at one bin
        hash = (int) (hash64 ^ hash64 >>> 32);
    }

    /** The keyed 64-bit hash of the name. */
    public long hash64() {
        return hash64;
    }

    /** The name's wire bytes, {@link #length()} of them; read-only, and changed by the next reduction. */
    public byte[] bytes() {
        return bytes;
    }

    public int length() {
        return length;
    }

    /**
     * Appends the name's wire bytes, one char per byte: an exact and compact name for stores
     * outside the process, made without allocating. {@link DomainKey#fromWireChars} reads it back.
     */
    public void appendWireChars(StringBuilder out) {
        for (int i = 0; i < length; i++) {
            out.append((char) (bytes[i] & 0xFF));
        }
    }

    /**
     * Sets this probe to {@code domain} under one more label, {@code label[0, labelLength)} (a
     * client network, for budgets per client and domain). Allocates nothing.
     */
    public void under(byte[] label, int labelLength, DomainProbe domain) {
        bytes[0] = (byte) labelLength;
        System.arraycopy(label, 0, bytes, 1, labelLength);
        System.arraycopy(domain.bytes, 0, bytes, 1 + labelLength, domain.length);
        length = 1 + labelLength + domain.length;
        seal();
    }

    /** An immutable copy, for storing. */
    public DomainKey toKey() {
        return new DomainKey(this);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DomainKey k && k.sameAs(this);
    }

    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public String toString() {
        return DomainBytes.toText(bytes, length);
    }
}
