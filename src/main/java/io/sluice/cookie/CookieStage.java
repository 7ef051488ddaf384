package io.sluice.cookie;

import io.netty.buffer.ByteBuf;
import io.sluice.pipeline.Answer;
import io.sluice.pipeline.AnswerSide;
import io.sluice.pipeline.Outcome;
import io.sluice.pipeline.Query;
import io.sluice.pipeline.Stage;
import io.sluice.pipeline.WrappedRoute;
import io.sluice.transport.Transport;
import io.sluice.wire.Answers;
import io.sluice.wire.CookieOption;
import io.sluice.wire.QueryView;
import io.sluice.wire.Wire;

/**
 * DNS cookies on the query path. On the way in, a query's COOKIE option is checked (a length no
 * cookie has is FORMERR, RFC 7873 section 5.2.2, as are two COOKIEs), taken out of the query (the upstream never sees
 * it), and kept on the query's route with a server cookie minted for it ({@link CookieRoute}); a
 * valid server cookie makes a UDP query verified. A query with no question but a COOKIE, a
 * client asking for a server cookie, is answered here (section 5.4). On the way back, every
 * answer to a query that came with a COOKIE carries the client's cookie and that server cookie,
 * whoever made it: an upstream, the cache, a refusal. One per event loop.
 *
 * <p>A signed query (TSIG, SIG(0)) keeps its COOKIE, which its signature covers: it goes upstream
 * as sent, and the upstream answers it.
 *
 * <p>A wrong or expired server cookie is answered as if absent, with a new one: no policy here
 * asks for a valid one, so BADCOOKIE is never sent; the limits give unverified queries less
 * ({@code limits.verified-share}).
 */
final class CookieStage implements Stage, AnswerSide {
    private final ServerCookies cookies;
    private final int maxUdpSize;
    private final CookieMeters meters;
    /** The COOKIE option an answer is given, written out: this loop's, reused. */
    private final byte[] option = new byte[CookieOption.OPTION_BYTES];

    CookieStage(ServerCookies cookies, int maxUdpSize, CookieMeters meters) {
        this.cookies = cookies;
        this.maxUdpSize = maxUdpSize;
        this.meters = meters;
    }

    @Override
    public Outcome handle(Query q) {
        ByteBuf m = q.message();
        QueryView view = q.view();
        int at = CookieOption.find(m, view);
        if (at < 0 || view.recordsBesidesOpt(m)) {
            return Outcome.CONTINUE; // no cookie, or one a signature covers: the upstream's to answer
        }
        int length = CookieOption.dataLength(m, at);
        if (!CookieOption.wellFormed(length) || !CookieOption.alone(m, view, at)) {
            meters.malformed.increment();
            q.answerWithQuestion(0, Wire.RCODE_FORMERR, 0, null);
            return Outcome.ANSWERED;
        }
        long client = CookieOption.client(m, at);
        long now = q.now();
        boolean valid = false;
        if (length == CookieOption.SENT_BYTES) {
            valid = cookies.valid(client, m.getLong(at + 4 + CookieOption.CLIENT_BYTES),
                    m.getLong(at + 4 + CookieOption.CLIENT_BYTES + 8), q.clientIp(), now);
            (valid ? meters.valid : meters.invalid).increment();
        } else if (length == CookieOption.CLIENT_BYTES) {
            meters.clientOnly.increment();
        } else {
            meters.invalid.increment(); // another server's form: not one of ours
        }
        long head = ServerCookies.head(now / 1_000_000_000L);
        CookieRoute route = new CookieRoute(q.route(), client, head, cookies.mint(client, head, q.clientIp()), valid,
                Math.min(maxUdpSize, view.udpPayload(m)));
        CookieOption.remove(m, view, at);
        q.reroute(route);
        if (!view.hasQuestion()) {
            ByteBuf answer = Answers.withQuestion(Transport.ALLOCATOR, m, view, Wire.FLAG_RA, Wire.RCODE_NOERROR, 0, null);
            q.answer(withCookie(answer, route));
            return Outcome.ANSWERED;
        }
        return Outcome.CONTINUE;
    }

    @Override
    public AnswerSide answers() {
        return this;
    }

    /**
     * Puts the cookie of its query's route in an answer. An answer that the cookie makes larger
     * than its UDP client takes leaves truncated (TC, the cookie kept), for the client to ask
     * again over TCP.
     */
    @Override
    public void answer(Answer a) {
        ByteBuf m = a.message();
        CookieRoute route = m == null ? null : WrappedRoute.find(a.route(), CookieRoute.class);
        if (route == null) {
            return;
        }
        a.rewritten(CookieOption.put(Transport.ALLOCATOR, m, option, route.client, route.serverHead,
                route.serverHash), route.udpLimit);
    }

    /** {@code answer} with {@code route}'s cookie. */
    private ByteBuf withCookie(ByteBuf answer, CookieRoute route) {
        ByteBuf out = CookieOption.put(Transport.ALLOCATOR, answer, option, route.client, route.serverHead,
                route.serverHash);
        if (out != answer) {
            answer.release();
        }
        return out;
    }
}
