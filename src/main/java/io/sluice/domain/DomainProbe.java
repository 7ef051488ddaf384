package io.sluice.domain;

import java.util.concurrent.ThreadLocalRandom;

/**
 * The registrable domain of the query being decided: mutable and reused, one per event loop, so
 * that reducing a name and looking its counter up allocate nothing. Copied into a
 * {@link DomainKey} only when a domain is first tracked.
 */
public final class DomainProbe {
    /**
     * Seed of the map-key hash, drawn per process: a client cannot choose names that collide in
     * the counter table.
     */
    private static final long KEY_SEED = ThreadLocalRandom.current().nextLong() | 1;

    final byte[] bytes = new byte[255];
    /** Start of each label of the name being reduced; scratch for {@link RegistrableDomains}. */
    final int[] labelStarts = new int[128];
    int length;
    int hash;

    static int hashOf(byte[] b, int length) {
        return DomainBytes.spread(DomainBytes.hashBackwards(KEY_SEED, b, 0, length));
    }

    void seal() {
        hash = hashOf(bytes, length);
    }

    /** An immutable copy, for storing. */
    public DomainKey toKey() {
        return new DomainKey(java.util.Arrays.copyOf(bytes, length), hash);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DomainKey k && k.hashCode() == hash && k.sameBytes(bytes, length);
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
