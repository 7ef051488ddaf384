package io.sluice.wire;

import io.netty.buffer.ByteBuf;

/** Finds a query's EDNS0 OPT record (RFC 6891). Only answers sluice writes itself need it. */
final class Opt {
    private Opt() {
    }

    /**
     * Returns the index of the OPT record's owner name in the additional section, or -1 when
     * there is none or the sections after the question are malformed.
     */
    static int find(ByteBuf buf, QueryView view) {
        int base = view.base();
        int end = base + view.length();
        int pos = view.questionEnd();
        int before = buf.getUnsignedShort(base + Wire.ANCOUNT_OFFSET)
                + buf.getUnsignedShort(base + Wire.NSCOUNT_OFFSET);
        int additional = buf.getUnsignedShort(base + Wire.ARCOUNT_OFFSET);
        for (int i = 0; i < before + additional; i++) {
            int nameEnd = Names.skip(buf, base, pos, end);
            if (nameEnd == Names.MALFORMED || nameEnd + 10 > end) {
                return -1;
            }
            if (i >= before && buf.getUnsignedShort(nameEnd) == Wire.TYPE_OPT) {
                return nameEnd - 1 == pos ? pos : -1; // an OPT owner is the root, one zero octet
            }
            pos = nameEnd + 10 + buf.getUnsignedShort(nameEnd + 8);
        }
        return -1;
    }
}
