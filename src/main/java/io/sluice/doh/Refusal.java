package io.sluice.doh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.AsciiString;

/**
 * What a DoH request is answered instead of a DNS answer: an HTTP status and a line of text for
 * the body. A client's mistake is a 4xx, never a 5xx.
 */
record Refusal(HttpResponseStatus status, String text) {
    /** The body's media type. */
    static final AsciiString CONTENT_TYPE = AsciiString.cached("text/plain; charset=utf-8");
    /** The methods served, for a 405's {@code allow}. */
    static final AsciiString ALLOWED = AsciiString.cached("GET, POST");
    static final Refusal NOT_A_QUERY = new Refusal(HttpResponseStatus.BAD_REQUEST, "not a DNS query");
    static final Refusal ZONE_TRANSFER =
            new Refusal(HttpResponseStatus.BAD_REQUEST, "zone transfers are not served over HTTPS");
    static final Refusal TOO_LARGE = new Refusal(HttpResponseStatus.BAD_REQUEST, "a DNS message is at most 65535 bytes");
    /**
     * A query the query path drops (acl-action or action drop): an HTTP client must be answered,
     * and a DNS answer would say more than the operator chose to.
     */
    static final Refusal REFUSED = new Refusal(HttpResponseStatus.FORBIDDEN, "refused");

    /** The response's body: the text, a line. */
    ByteBuf body(ByteBufAllocator alloc) {
        return ByteBufUtil.writeUtf8(alloc, text + "\n");
    }
}
