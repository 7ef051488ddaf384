package io.sluice.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * The EDNS Client Subnet option (RFC 7871) on the wire: found in a message's OPT record, checked,
 * read, and written. Its data is a family (1 for IPv4, 2 for IPv6), a source prefix length, a scope
 * prefix length, and the address cut to the source prefix: as many octets as the prefix covers,
 * the bits past it zero.
 */
public final class ClientSubnet {
    public static final int FAMILY_IPV4 = 1;
    public static final int FAMILY_IPV6 = 2;
    /** Octets of the option's data before its address: family, source and scope prefix lengths. */
    public static final int FIXED_BYTES = 4;
    /** The most an option takes on the wire: its code and length, then an IPv6 address's data. */
    public static final int MAX_OPTION_BYTES = 4 + FIXED_BYTES + 16;
    /** What {@link #inMessage} gives for an option that is not {@link #wellFormed}. */
    private static final int MALFORMED = -2;

    private ClientSubnet() {
    }

    /** The index of the Client Subnet option (its code) in the query {@code view} read, or -1. */
    public static int find(ByteBuf buf, QueryView view) {
        int optAt = view.optAt();
        return optAt < 0 ? -1 : Opt.optionAt(buf, optAt, view.base() + view.length(), QueryEdns.OPTION_CLIENT_SUBNET);
    }

    /**
     * The index of the Client Subnet option in the OPT record of {@code message}, or -1: none, or
     * one that is not {@link #wellFormed} or runs past the message.
     */
    public static int findInMessage(ByteBuf message) {
        int at = inMessage(message);
        return at >= 0 ? at : -1;
    }

    /**
     * The index of the Client Subnet option in the OPT record of {@code message}; -1 when it has
     * none, {@link #MALFORMED} when its option is not {@link #wellFormed} or runs past the message.
     */
    private static int inMessage(ByteBuf message) {
        int base = message.readerIndex();
        int end = message.writerIndex();
        int optAt = end - base > Wire.HEADER_BYTES ? Opt.find(message, base, end) : -1;
        int at = optAt < 0 ? -1 : Opt.optionAt(message, optAt, end, QueryEdns.OPTION_CLIENT_SUBNET);
        if (at < 0) {
            return -1;
        }
        return at + 4 + message.getUnsignedShort(at + 2) <= end && wellFormed(message, at) ? at : MALFORMED;
    }

    /** Whether the query's option at {@code at} (from {@link #find}) is its only Client Subnet. */
    public static boolean alone(ByteBuf buf, QueryView view, int at) {
        return Opt.noneAfter(buf, view.optAt(), view.base() + view.length(), at, QueryEdns.OPTION_CLIENT_SUBNET);
    }

    /**
     * Whether {@code reply} may be the answer to {@code query}, whose Client Subnet option is at
     * {@code asked}: it carries none (RFC 7871 section 7.3 takes that as a scope of 0), or one with
     * the query's family, source prefix and address. A query's source prefix of 0 names no network,
     * and any well-formed option answers it. Section 7.3 drops a reply that is not.
     */
    public static boolean answers(ByteBuf query, int asked, ByteBuf reply) {
        int at = inMessage(reply);
        return at == -1 || at >= 0 && (sourcePrefix(query, asked) == 0 || echoes(query, asked, reply, at));
    }

    /**
     * Whether {@code reply}, one that {@link #answers} the query {@code view} read from {@code query},
     * is an answer for every network: the query named a network (a source prefix other than 0,
     * which would say nothing of any), and the reply echoes the query's option with a scope of 0,
     * or carries none (RFC 7871 section 7.3) and is not a SERVFAIL, which may be one network's
     * failure alone.
     */
    public static boolean forEveryNetwork(ByteBuf query, QueryView view, ByteBuf reply) {
        int asked = find(query, view);
        if (asked < 0 || sourcePrefix(query, asked) == 0) {
            return false;
        }
        int at = inMessage(reply);
        return at == -1 ? Wire.rcode(reply) != Wire.RCODE_SERVFAIL
                : at >= 0 && scopePrefix(reply, at) == 0 && echoes(query, asked, reply, at);
    }

    /** Whether the reply's option at {@code at} has the family, source prefix and address of the query's at {@code asked}. */
    private static boolean echoes(ByteBuf query, int asked, ByteBuf reply, int at) {
        int length = query.getUnsignedShort(asked + 2);
        if (length != reply.getUnsignedShort(at + 2) || family(query, asked) != family(reply, at)
                || sourcePrefix(query, asked) != sourcePrefix(reply, at)) {
            return false;
        }
        for (int i = 4 + FIXED_BYTES; i < 4 + length; i++) {
            if (query.getByte(asked + i) != reply.getByte(at + i)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether the option at {@code at} is one RFC 7871 section 7.1.2 lets through: family 1 or 2,
     * a source prefix no longer than the address, exactly the octets it covers, no bit set past it.
     */
    public static boolean wellFormed(ByteBuf buf, int at) {
        int length = buf.getUnsignedShort(at + 2);
        if (length < FIXED_BYTES) {
            return false;
        }
        int family = family(buf, at);
        int bits = family == FAMILY_IPV4 ? 32 : family == FAMILY_IPV6 ? 128 : -1;
        int source = sourcePrefix(buf, at);
        if (bits < 0 || source > bits || length - FIXED_BYTES != (source + 7) / 8) {
            return false;
        }
        if (source % 8 != 0) {
            int last = buf.getUnsignedByte(at + 4 + length - 1);
            return (last & (0xFF >>> (source % 8))) == 0;
        }
        return true;
    }

    public static int family(ByteBuf buf, int at) {
        return buf.getUnsignedShort(at + 4);
    }

    public static int sourcePrefix(ByteBuf buf, int at) {
        return buf.getUnsignedByte(at + 6);
    }

    public static int scopePrefix(ByteBuf buf, int at) {
        return buf.getUnsignedByte(at + 7);
    }

    /** The option's address octets, {@code (source + 7) / 8} of them, into {@code out} from 0. */
    public static void address(ByteBuf buf, int at, byte[] out) {
        buf.getBytes(at + 4 + FIXED_BYTES, out, 0, (sourcePrefix(buf, at) + 7) / 8);
    }

    /**
     * Writes an option for {@code address} (4 or 16 octets) cut to {@code source} bits, with
     * {@code scope}: its code, length and data.
     */
    public static void write(ByteBuf out, byte[] address, int source, int scope) {
        int octets = (source + 7) / 8;
        out.writeShort(QueryEdns.OPTION_CLIENT_SUBNET);
        out.writeShort(FIXED_BYTES + octets);
        out.writeShort(address.length == 4 ? FAMILY_IPV4 : FAMILY_IPV6);
        out.writeByte(source);
        out.writeByte(scope);
        for (int i = 0; i < octets; i++) {
            int keep = Math.min(8, source - 8 * i); // the bits of this octet within the prefix
            out.writeByte(address[i] & (0xFF00 >>> keep));
        }
    }

    /**
     * Writes into {@code out} (cleared) the query {@code view} read from {@code query} with an
     * option for {@code address} cut to {@code source} bits in place of its own at {@code at} (or
     * -1: added to its OPT record, or, without one, in an OPT record added for it offering 512
     * octets, what the query took without one).
     */
    public static void rewrite(ByteBuf query, QueryView view, int at, ByteBuf out, byte[] address, int source) {
        out.clear();
        int base = view.base();
        int end = base + view.length();
        int optAt = view.optAt();
        if (optAt < 0) {
            out.writeBytes(query, base, view.length());
            out.setShort(Wire.ARCOUNT_OFFSET, out.getUnsignedShort(Wire.ARCOUNT_OFFSET) + 1);
            out.writeByte(0);
            out.writeShort(Wire.TYPE_OPT);
            out.writeShort(QueryEdns.CLASSIC_UDP_PAYLOAD);
            out.writeInt(0);
            out.writeShort(4 + FIXED_BYTES + (source + 7) / 8);
            write(out, address, source, 0);
            return;
        }
        int rdLengthAt = optAt + Opt.FIXED_BYTES - 2;
        int rdataEnd = optAt + Opt.FIXED_BYTES + query.getUnsignedShort(rdLengthAt);
        int cut = at >= 0 ? at : rdataEnd;
        int dropped = at >= 0 ? 4 + query.getUnsignedShort(at + 2) : 0;
        out.writeBytes(query, base, cut - base);
        int before = out.writerIndex();
        write(out, address, source, 0);
        int written = out.writerIndex() - before;
        out.writeBytes(query, cut + dropped, end - cut - dropped);
        out.setShort(rdLengthAt - base, query.getUnsignedShort(rdLengthAt) - dropped + written);
    }

    /** Takes the option out of the answer {@code message}, in place, when it has one. */
    public static void removeFromAnswer(ByteBuf message) {
        int base = message.readerIndex();
        int end = message.writerIndex();
        int optAt = end - base > Wire.HEADER_BYTES ? Opt.find(message, base, end) : -1;
        int at = optAt < 0 ? -1 : Opt.optionAt(message, optAt, end, QueryEdns.OPTION_CLIENT_SUBNET);
        if (at >= 0 && at + 4 + message.getUnsignedShort(at + 2) <= end) {
            int removed = 4 + message.getUnsignedShort(at + 2);
            int rdLengthAt = optAt + Opt.FIXED_BYTES - 2;
            message.setShort(rdLengthAt, message.getUnsignedShort(rdLengthAt) - removed);
            Opt.cut(message, at, removed);
        }
    }

    /**
     * Takes the OPT record out of the answer {@code message}, in place: the answer to a query that
     * had none, an OPT added to carry the option ({@link #rewrite}).
     */
    public static void removeOpt(ByteBuf message) {
        int base = message.readerIndex();
        int end = message.writerIndex();
        int optAt = end - base > Wire.HEADER_BYTES ? Opt.find(message, base, end) : -1;
        if (optAt >= 0) {
            Opt.cut(message, optAt, Opt.FIXED_BYTES + message.getUnsignedShort(optAt + Opt.FIXED_BYTES - 2));
            message.setShort(base + Wire.ARCOUNT_OFFSET, message.getUnsignedShort(base + Wire.ARCOUNT_OFFSET) - 1);
        }
    }

    /**
     * {@code answer} with the option {@code option[0, length)} (code, length, data) in place of
     * its own Client Subnet option ({@link Opt#put}); one without an OPT record is left as it is,
     * and one whose options run past their record loses its own option and gets none (never
     * another network's). The same buffer when it has room, else a new one, whose reference the
     * caller owns besides {@code answer}'s.
     */
    public static ByteBuf replaceInAnswer(ByteBufAllocator alloc, ByteBuf answer, byte[] option, int length) {
        removeFromAnswer(answer);
        return Opt.put(alloc, answer, option, length, 0);
    }

    /**
     * Takes the {@code length} octets of an option at {@code at} out of {@code message}, whose OPT
     * record is at {@code optAt}, in place; {@link #insertAt} puts them back.
     */
    public static void removeAt(ByteBuf message, int optAt, int at, int length) {
        int rdLengthAt = optAt + Opt.FIXED_BYTES - 2;
        message.setShort(rdLengthAt, message.getUnsignedShort(rdLengthAt) - length);
        Opt.cut(message, at, length);
    }

    /** Puts {@code option[0, length)} back at {@code at} of {@code message}, whose OPT is at {@code optAt}. */
    public static void insertAt(ByteBuf message, int optAt, int at, byte[] option, int length) {
        int end = message.writerIndex();
        message.ensureWritable(length);
        for (int i = end - 1; i >= at; i--) { // backward: the ranges overlap
            message.setByte(i + length, message.getByte(i));
        }
        message.setBytes(at, option, 0, length);
        message.writerIndex(end + length);
        int rdLengthAt = optAt + Opt.FIXED_BYTES - 2;
        message.setShort(rdLengthAt, message.getUnsignedShort(rdLengthAt) + length);
    }
}
