package io.sluice.wire;

import io.netty.buffer.ByteBuf;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Domain names in wire form, read in place from a message buffer.
 *
 * <p>Offsets are absolute buffer indices; {@code base} is the index of the message's first byte,
 * which compression pointers are relative to. A compression pointer must point into the message
 * body and before the start of the labels it continues, so every jump goes strictly backwards from
 * the last one: loops are impossible. Hops are counted all the same: a chain of pointers each two
 * octets before the last adds nothing to a name but work, and a message of names at the end of
 * such chains would cost a walk quadratic in its size. A name sluice only passes over (a record
 * in a query, a question past the first) is {@link #pass passed} in place, pointers unfollowed.
 */
public final class Names {
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long LOW_SEVEN = 0x7F7F7F7F7F7F7F7FL;
    private static final long HIGH_BITS = 0x8080808080808080L;
    /** Added to a byte's low seven bits, sets its high bit from 'A' up, and from past 'Z' up. */
    private static final long FROM_A = 0x3F3F3F3F3F3F3F3FL;
    private static final long PAST_Z = 0x2525252525252525L;

    private Names() {
    }

    /** Returned by {@link #skip} for a name that is not well formed. */
    public static final int MALFORMED = -1;
    /** Pointers a name may follow: as many as the labels a name of 255 octets can have. */
    static final int MAX_HOPS = 127;

    /**
     * Returns the index just past the name that starts at {@code offset} (a pointer ends the name
     * in place), or {@link #MALFORMED} if the name runs past {@code end}, uses a reserved label
     * type, points forwards or outside the message, follows more than {@value #MAX_HOPS} pointers,
     * or expands to more than 255 octets.
     */
    public static int skip(ByteBuf buf, int base, int offset, int end) {
        int pos = offset;
        int segmentStart = offset;
        int resume = -1;
        int expanded = 0;
        int hops = 0;
        while (true) {
            if (pos >= end) {
                return MALFORMED;
            }
            int len = buf.getUnsignedByte(pos);
            if (len == 0) {
                expanded += 1;
                if (expanded > Wire.MAX_NAME_BYTES) {
                    return MALFORMED;
                }
                return resume >= 0 ? resume : pos + 1;
            }
            int kind = len & Wire.POINTER_MASK;
            if (kind == Wire.POINTER_MASK) {
                if (pos + 1 >= end) {
                    return MALFORMED;
                }
                int target = base + (((len & 0x3F) << 8) | buf.getUnsignedByte(pos + 1));
                if (target < base + Wire.HEADER_BYTES || target >= segmentStart || ++hops > MAX_HOPS) {
                    return MALFORMED;
                }
                if (resume < 0) {
                    resume = pos + 2;
                }
                pos = target;
                segmentStart = target;
            } else if (kind != 0) {
                return MALFORMED; // 0x40 and 0x80 label types are reserved/obsolete (RFC 6891 s5)
            } else {
                expanded += len + 1;
                if (expanded > Wire.MAX_NAME_BYTES) {
                    return MALFORMED;
                }
                pos += len + 1;
            }
        }
    }

    /**
     * Returns the index just past the name that starts at {@code offset}, read in place: its labels
     * up to the root's zero octet or a pointer, which ends it and is not followed. So passing over
     * a message's names costs its length, however its pointers chain. {@link #MALFORMED} if the
     * name runs past {@code end}, uses a reserved label type or is longer than 255 octets in place.
     */
    public static int pass(ByteBuf buf, int offset, int end) {
        int pos = offset;
        while (pos < end && pos - offset < Wire.MAX_NAME_BYTES) {
            int len = buf.getUnsignedByte(pos);
            if (len == 0) {
                return pos + 1;
            }
            int kind = len & Wire.POINTER_MASK;
            if (kind == Wire.POINTER_MASK) {
                return pos + 2 <= end ? pos + 2 : MALFORMED;
            }
            if (kind != 0) {
                return MALFORMED;
            }
            pos += len + 1;
        }
        return MALFORMED;
    }

    /**
     * Returns the index just past the question section (QDCOUNT names, each with type and class)
     * of the message between {@code base} and {@code end}, or {@link #MALFORMED}. The names are
     * {@link #pass passed}, not followed.
     */
    public static int skipQuestions(ByteBuf buf, int base, int end) {
        int pos = base + Wire.HEADER_BYTES;
        for (int i = buf.getUnsignedShort(base + Wire.QDCOUNT_OFFSET); i > 0; i--) {
            int nameEnd = pass(buf, pos, end);
            if (nameEnd == MALFORMED || nameEnd + 4 > end) {
                return MALFORMED;
            }
            pos = nameEnd + 4;
        }
        return pos;
    }

    /**
     * Compares two well-formed names label by label, ASCII case-insensitively (RFC 4343), following
     * compression pointers in either. Both names must have passed {@link #skip}.
     */
    public static boolean equalIgnoreCase(ByteBuf a, int aBase, int aOffset, ByteBuf b, int bBase, int bOffset) {
        int pa = follow(a, aBase, aOffset);
        int pb = follow(b, bBase, bOffset);
        while (true) {
            int la = a.getUnsignedByte(pa);
            int lb = b.getUnsignedByte(pb);
            if (la != lb) {
                return false;
            }
            if (la == 0) {
                return true;
            }
            for (int i = 1; i <= la; i++) {
                if (lower(a.getByte(pa + i)) != lower(b.getByte(pb + i))) {
                    return false;
                }
            }
            pa = follow(a, aBase, pa + la + 1);
            pb = follow(b, bBase, pb + lb + 1);
        }
    }

    /** Resolves a chain of pointers at {@code pos} to the index of the next real label. */
    static int follow(ByteBuf buf, int base, int pos) {
        int len = buf.getUnsignedByte(pos);
        while ((len & Wire.POINTER_MASK) == Wire.POINTER_MASK) {
            pos = base + (((len & 0x3F) << 8) | buf.getUnsignedByte(pos + 1));
            len = buf.getUnsignedByte(pos);
        }
        return pos;
    }

    /** ASCII lower case (RFC 4343: DNS compares names case-insensitively in ASCII only). */
    public static byte lower(byte c) {
        return c >= 'A' && c <= 'Z' ? (byte) (c + ('a' - 'A')) : c;
    }

    /**
     * {@link #lower(byte)} of each byte of {@code b[from, to)}, eight at a time: a wire name's
     * length octets are at most 63, below 'A', so a whole name may be given. Each byte's test is
     * sums of its low seven bits, which never carry into the next byte. A query's name is lowered
     * for its limit and for the cache, twice for a miss (docs/benchmarks.md, "Answer cache").
     */
    public static void lower(byte[] b, int from, int to) {
        int i = from;
        for (; i + Long.BYTES <= to; i += Long.BYTES) {
            long w = (long) LONGS.get(b, i);
            long low = w & LOW_SEVEN;
            long upper = (low + FROM_A) & ~(low + PAST_Z) & ~w & HIGH_BITS;
            if (upper != 0) {
                LONGS.set(b, i, w | upper >>> 2); // 0x80 >>> 2 is 'a' - 'A'
            }
        }
        for (; i < to; i++) {
            b[i] = lower(b[i]);
        }
    }

    /**
     * Whether the message's first record, at {@code at} right after the question, has its owner
     * name spelled out rather than a compression pointer: false too when there is no record. A
     * server that compresses points every owner name that repeats the question at it.
     */
    public static boolean spelledOutAt(ByteBuf message, int at) {
        return at < message.writerIndex() && (message.getByte(at) & 0xC0) != 0xC0;
    }

    /**
     * Writes the {@code length} bytes of {@code now} at {@code nowAt} over every copy of those of
     * {@code was} at {@code wasAt} (a whole name in wire form, the same but for case) from
     * {@code from} to the end of {@code message}: a name spelled out in the case of the question
     * it repeats, given another question's case. Byte for byte, so a name differing in anything
     * but the case the question gave it is left as it is.
     */
    public static void replaceCopies(ByteBuf message, int from, byte[] was, int wasAt, int length, ByteBuf now,
                                     int nowAt) {
        int end = message.writerIndex();
        for (int at = from; at + length <= end; at++) {
            if (message.getByte(at) == was[wasAt] && matches(message, at, was, wasAt, length)) {
                message.setBytes(at, now, nowAt, length);
                at += length - 1;
            }
        }
    }

    /**
     * For a message whose answer section opens with a DNAME record that applies to its question
     * (RFC 6672 section 3.1: the DNAME, then the CNAME synthesised from it): the length of the
     * question name's labels below the DNAME's owner, which the synthesised CNAME's target repeats
     * in the letters of the question as it was asked, or in the zone's (servers differ: unbound
     * copies the question's, nsd writes its own). 0 for any other message. Servers put that DNAME
     * first, so one record's owner and type are read.
     *
     * @param recordsAt where the records start, just past the question
     */
    public static int dnamePrefix(ByteBuf message, int recordsAt) {
        int base = message.readerIndex();
        int end = message.writerIndex();
        if (end - base < Wire.HEADER_BYTES || message.getUnsignedShort(base + Wire.ANCOUNT_OFFSET) == 0) {
            return 0;
        }
        int ownerEnd = skip(message, base, recordsAt, end);
        if (ownerEnd == MALFORMED || ownerEnd + 10 > end || message.getUnsignedShort(ownerEnd) != Wire.TYPE_DNAME) {
            return 0;
        }
        int question = base + Wire.HEADER_BYTES;
        int owner = expandedLength(message, base, recordsAt);
        int pos = question;
        int nameEnd = skip(message, base, question, end); // a question name has no pointer
        while (pos < nameEnd && nameEnd - pos > owner) {
            pos += message.getUnsignedByte(pos) + 1;
        }
        return pos > question && nameEnd - pos == owner
                && equalIgnoreCase(message, base, recordsAt, message, base, pos) ? pos - question : 0;
    }

    /** The length in wire form of the well-formed name at {@code pos}, its pointers followed, its root label included. */
    private static int expandedLength(ByteBuf message, int base, int pos) {
        int length = 1;
        for (pos = follow(message, base, pos); message.getUnsignedByte(pos) != 0; pos = follow(message, base, pos)) {
            int len = message.getUnsignedByte(pos);
            length += len + 1;
            pos += len + 1;
        }
        return length;
    }

    private static boolean matches(ByteBuf message, int at, byte[] name, int nameAt, int length) {
        for (int i = 1; i < length; i++) {
            if (message.getByte(at + i) != name[nameAt + i]) {
                return false;
            }
        }
        return true;
    }
}
