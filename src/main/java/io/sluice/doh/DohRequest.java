package io.sluice.doh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.sluice.wire.Wire;
import java.util.Base64;
import java.util.List;
import java.util.Locale;

/**
 * What an HTTP request to a DoH listener asks (RFC 8484 section 4.1): the DNS message of a
 * {@code POST} body or of a {@code GET}'s {@code dns} parameter, or the HTTP status that says what
 * is wrong with the request. A client's mistake is a 4xx, never a 5xx: 404 for another path, 405
 * for another method, 415 for a POST of another content type, 400 for the rest (a {@code dns}
 * value that is not base64url, a message shorter than a DNS header or longer than 65,535 bytes).
 *
 * @param message the DNS message (the caller releases it), or null
 * @param refusal what to answer instead, when {@code message} is null
 */
public record DohRequest(ByteBuf message, Refusal refusal) {
    public static final String PATH = "/dns-query";
    public static final String CONTENT_TYPE = "application/dns-message";
    /** A DNS message's largest size over a stream (RFC 1035 section 4.2.2's two-byte length). */
    public static final int MAX_MESSAGE = 65_535;

    /**
     * Reads a request. {@code body} is the POST body (not released here); the message of a POST
     * is a retained slice of it, that of a GET a buffer of its own: either is the caller's to release.
     */
    public static DohRequest read(String method, String uri, CharSequence contentType, ByteBuf body) {
        QueryStringDecoder query = new QueryStringDecoder(uri == null ? "" : uri);
        String path;
        List<String> dns;
        try { // decoded here, once: a bad escape (%, %zz) throws
            path = query.path();
            dns = query.parameters().get("dns");
        } catch (IllegalArgumentException e) {
            return refused(HttpResponseStatus.BAD_REQUEST, "not a URI: " + e.getMessage());
        }
        if (!PATH.equals(path)) {
            return refused(HttpResponseStatus.NOT_FOUND, "DNS over HTTPS is served at " + PATH);
        }
        if ("POST".equals(method)) {
            if (contentType == null || !mediaType(contentType).equals(CONTENT_TYPE)) {
                return refused(HttpResponseStatus.UNSUPPORTED_MEDIA_TYPE, "a POST's content-type is " + CONTENT_TYPE);
            }
            return message(body.retainedSlice());
        }
        if ("GET".equals(method)) {
            if (dns == null || dns.size() != 1) {
                return refused(HttpResponseStatus.BAD_REQUEST, "a GET carries the query in one dns= parameter");
            }
            byte[] decoded;
            try {
                decoded = Base64.getUrlDecoder().decode(dns.get(0));
            } catch (IllegalArgumentException e) {
                return refused(HttpResponseStatus.BAD_REQUEST, "dns= is not base64url");
            }
            return message(Unpooled.wrappedBuffer(decoded));
        }
        return refused(HttpResponseStatus.METHOD_NOT_ALLOWED, "GET or POST");
    }

    private static DohRequest message(ByteBuf m) {
        int size = m.readableBytes();
        if (size < Wire.HEADER_BYTES || size > MAX_MESSAGE) {
            m.release();
            return size < Wire.HEADER_BYTES
                    ? refused(HttpResponseStatus.BAD_REQUEST, "not a DNS message: shorter than its header")
                    : new DohRequest(null, Refusal.TOO_LARGE);
        }
        return new DohRequest(m, null);
    }

    private static DohRequest refused(HttpResponseStatus status, String error) {
        return new DohRequest(null, new Refusal(status, error));
    }

    /** The media type without its parameters, lower case: {@code application/dns-message; charset=x} is the type. */
    private static String mediaType(CharSequence contentType) {
        String t = contentType.toString();
        int semicolon = t.indexOf(';');
        return (semicolon < 0 ? t : t.substring(0, semicolon)).trim().toLowerCase(Locale.ROOT);
    }
}
