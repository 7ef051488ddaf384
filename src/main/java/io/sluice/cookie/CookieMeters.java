package io.sluice.cookie;

import io.sluice.metrics.Registry;
import java.util.concurrent.atomic.LongAdder;

/** What the cookie stages count, by what a query's COOKIE held. */
final class CookieMeters {
    final LongAdder valid;
    final LongAdder invalid;
    final LongAdder clientOnly;
    final LongAdder malformed;

    CookieMeters(Registry r) {
        String help = "Queries with a COOKIE option, by its server cookie: valid (the client proved its address),"
                + " invalid (wrong, expired, another server's), absent (a client cookie alone), or malformed"
                + " (a length no cookie has, answered FORMERR).";
        valid = r.counter("cookies", help, "server_cookie", "valid");
        invalid = r.counter("cookies", help, "server_cookie", "invalid");
        clientOnly = r.counter("cookies", help, "server_cookie", "absent");
        malformed = r.counter("cookies", help, "server_cookie", "malformed");
    }
}
