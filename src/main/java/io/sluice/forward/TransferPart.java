package io.sluice.forward;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;

/**
 * A message of a zone transfer written to a client's TCP connection, other than the transfer's
 * last: the connection owes the client one answer per query, and a transfer is one query however
 * many messages it takes. The connection writes the content on.
 */
public final class TransferPart extends DefaultByteBufHolder {
    TransferPart(ByteBuf message) {
        super(message);
    }
}
