package io.sluice.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The DNS COOKIE option (RFC 7873) on the wire: found in a query, taken out of it, and put in an
 * answer. A cookie's parts are handed around as big-endian longs of their octets as they stand on
 * the wire: the client cookie (8 octets), then a server cookie of RFC 9018's form (16 octets: its
 * version, reserved octets and timestamp, then its hash).
 */
public final class CookieOption {
    /** Octets of a client cookie. */
    public static final int CLIENT_BYTES = 8;
    /** Octets of the option's data sluice writes: the client cookie and a server cookie of RFC 9018's form. */
    public static final int SENT_BYTES = CLIENT_BYTES + 16;
    /** Octets the option sluice writes takes: its code and length, then its data. */
    public static final int OPTION_BYTES = 4 + SENT_BYTES;
    private static final int MIN_SERVER_BYTES = 8;
    private static final int MAX_SERVER_BYTES = 32;
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private CookieOption() {
    }

    /**
     * The index of the COOKIE option (its code) of the query {@code view} has read from
     * {@code buf}, or -1 when it has none.
     */
    public static int find(ByteBuf buf, QueryView view) {
        int optAt = view.optAt();
        return optAt < 0 ? -1 : Opt.optionAt(buf, optAt, view.base() + view.length(), Wire.EDNS_OPTION_COOKIE);
    }

    /** The length of the option data at {@code at} (from {@link #find}). */
    public static int dataLength(ByteBuf buf, int at) {
        return buf.getUnsignedShort(at + 2);
    }

    /**
     * Whether option data of {@code length} octets is a cookie: a client cookie alone, or with a
     * server cookie of 8 to 32 octets (RFC 7873 section 4). Another length is FORMERR (section 5.2.2).
     */
    public static boolean wellFormed(int length) {
        return length == CLIENT_BYTES
                || length >= CLIENT_BYTES + MIN_SERVER_BYTES && length <= CLIENT_BYTES + MAX_SERVER_BYTES;
    }

    /**
     * Whether the option at {@code at} (from {@link #find}) is the query's only COOKIE: a second
     * one would be a question of which to answer, and would go upstream; it is FORMERR too.
     */
    public static boolean alone(ByteBuf buf, QueryView view, int at) {
        return Opt.noneAfter(buf, view.optAt(), view.base() + view.length(), at, Wire.EDNS_OPTION_COOKIE);
    }

    /** The client cookie of the option at {@code at}. */
    public static long client(ByteBuf buf, int at) {
        return buf.getLong(at + 4);
    }

    /**
     * Takes the option at {@code at} out of the query {@code view} has read from {@code buf}, in
     * place: its OPT record is that much shorter, and so is the message.
     */
    public static void remove(ByteBuf buf, QueryView view, int at) {
        int removed = 4 + dataLength(buf, at);
        int rdLength = view.optAt() + Opt.FIXED_BYTES - 2;
        buf.setShort(rdLength, buf.getUnsignedShort(rdLength) - removed);
        view.cut(buf, at, removed);
    }

    /**
     * {@code answer} with a COOKIE option of {@code client} and the server cookie
     * {@code serverHead} (version, reserved, timestamp), {@code serverHash}, in place of any it
     * had ({@link Opt#put}, the option written out in {@code scratch}, {@link #OPTION_BYTES} long):
     * the same buffer when it had room, else a new one, whose reference the caller owns besides
     * {@code answer}'s. An answer without an OPT record gets one; one whose OPT record or options
     * run past its end is left as it is.
     */
    public static ByteBuf put(ByteBufAllocator alloc, ByteBuf answer, byte[] scratch, long client, long serverHead,
                              long serverHash) {
        scratch[0] = (byte) (Wire.EDNS_OPTION_COOKIE >>> 8);
        scratch[1] = (byte) Wire.EDNS_OPTION_COOKIE;
        scratch[2] = (byte) (SENT_BYTES >>> 8);
        scratch[3] = (byte) SENT_BYTES;
        LONG.set(scratch, 4, client);
        LONG.set(scratch, 4 + CLIENT_BYTES, serverHead);
        LONG.set(scratch, 4 + CLIENT_BYTES + 8, serverHash);
        return Opt.put(alloc, answer, scratch, OPTION_BYTES, Answers.ADVERTISED_UDP_PAYLOAD);
    }
}
