package io.sluice.domain;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * A registrable domain as a map key: immutable lower-cased wire-format bytes and their hash. Equal
 * to a {@link DomainProbe} holding the same bytes, so that maps can be searched with a probe and a
 * key is only made for a domain seen for the first time.
 *
 * <p>The first {@value #INLINE_BYTES} bytes are kept in three long fields rather than an array, and
 * the class may be extended (the limiter's counters are keys), so that a lookup in a table of a
 * million domains touches the map's node and this object and nothing else: each extra object is
 * one more cache miss, a read from DRAM that a decision waits on (docs/benchmarks.md, "Decision (JMH)").
 */
public class DomainKey {
    static final int INLINE_BYTES = 24;
    private static final VarHandle LONGS =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    final long w0;
    final long w1;
    final long w2;
    /** Bytes past the first 24, or null; most registrable domains fit inline. */
    final byte[] rest;
    final int length;
    final int hash;

    /** A copy of the probe's current domain. */
    protected DomainKey(DomainProbe p) {
        this(DomainBytes.word(p.bytes, 0, p.length), DomainBytes.word(p.bytes, 8, p.length),
                DomainBytes.word(p.bytes, 16, p.length),
                p.length > INLINE_BYTES ? Arrays.copyOfRange(p.bytes, INLINE_BYTES, p.length) : null,
                p.length, p.hash);
    }

    /** The same domain as {@code other}. */
    protected DomainKey(DomainKey other) {
        this(other.w0, other.w1, other.w2, other.rest, other.length, other.hash);
    }

    private DomainKey(long w0, long w1, long w2, byte[] rest, int length, int hash) {
        this.w0 = w0;
        this.w1 = w1;
        this.w2 = w2;
        this.rest = rest;
        this.length = length;
        this.hash = hash;
    }

    /** The key for a presentation-format name such as {@code example.co.uk}. */
    public static DomainKey of(String name) {
        return new DomainKey(DomainProbe.of(name));
    }

    final boolean sameAs(DomainProbe p) {
        return hash == p.hash && length == p.length && w0 == DomainBytes.word(p.bytes, 0, length)
                && w1 == DomainBytes.word(p.bytes, 8, length) && w2 == DomainBytes.word(p.bytes, 16, length)
                && (length <= INLINE_BYTES || Arrays.equals(rest, 0, rest.length, p.bytes, INLINE_BYTES, length));
    }

    @Override
    public final boolean equals(Object o) {
        if (o instanceof DomainKey k) {
            return hash == k.hash && length == k.length && w0 == k.w0 && w1 == k.w1 && w2 == k.w2
                    && Arrays.equals(rest, k.rest);
        }
        return o instanceof DomainProbe p && sameAs(p);
    }

    @Override
    public final int hashCode() {
        return hash;
    }

    /** The name's wire bytes, a copy. */
    public byte[] wire() {
        byte[] b = new byte[Math.max(length, INLINE_BYTES)];
        LONGS.set(b, 0, w0);
        LONGS.set(b, 8, w1);
        LONGS.set(b, 16, w2);
        if (rest != null) {
            System.arraycopy(rest, 0, b, INLINE_BYTES, rest.length);
        }
        return Arrays.copyOf(b, length);
    }

    /** The key whose {@link DomainProbe#appendWireChars} gave {@code chars}. */
    public static DomainKey fromWireChars(CharSequence chars) {
        byte[] b = new byte[chars.length()];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) chars.charAt(i);
        }
        return of(DomainBytes.toText(b, b.length));
    }

    /** Presentation format, lower case: {@code example.co.uk}. */
    public final String name() {
        return DomainBytes.toText(wire(), length);
    }

    @Override
    public String toString() {
        return name();
    }
}
