package io.sluice.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.testing.Dns;
import java.net.InetAddress;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** Whether a reply answers the query it claims to: the check that keeps forged replies out. */
class RepliesTest {
    /** The query as the forwarder keeps it: after some other bytes, so that indices are relative. */
    private static final int QUERY_AT = 5;

    private final QueryView view = new QueryView();

    @Test
    void aReplyEchoingTheQuestionAnswersIt() throws Exception {
        assertTrue(answers("www.example.com.", Type.A, reply("www.example.com.", Type.A)));
    }

    @Test
    void theNameIsComparedWithoutCase() throws Exception {
        assertTrue(answers("www.example.com.", Type.A, reply("WwW.ExAmple.COM.", Type.A)));
    }

    @Test
    void anotherNameOfTheSameLengthDoesNot() throws Exception {
        assertFalse(answers("www.example.com.", Type.A, reply("www.exbmple.com.", Type.A)));
        assertFalse(answers("www.example.com.", Type.A, reply("WWW.EXBMPLE.COM.", Type.A)));
    }

    @Test
    void anotherTypeDoesNot() throws Exception {
        assertFalse(answers("www.example.com.", Type.A, reply("www.example.com.", Type.AAAA)));
    }

    @Test
    void aQuerySentBackDoesNot() throws Exception {
        byte[] notAResponse = Dns.query(1, "www.example.com.", Type.A);
        assertFalse(answers("www.example.com.", Type.A, notAResponse));
    }

    @Test
    void aReplyCutInsideTheQuestionDoesNot() throws Exception {
        byte[] whole = reply("www.example.com.", Type.A);
        byte[] cut = Arrays.copyOf(whole, Wire.HEADER_BYTES + 10);
        assertFalse(answers("www.example.com.", Type.A, cut));
    }

    @Test
    void aQuestionLessErrorOrTruncationAnswers() {
        for (int rcode : new int[] {Wire.RCODE_FORMERR, Wire.RCODE_SERVFAIL, Wire.RCODE_NOTIMP, Wire.RCODE_REFUSED}) {
            assertTrue(answers("www.example.com.", Type.A, headerOnly(0x8000 | rcode)), "rcode " + rcode);
        }
        assertTrue(answers("www.example.com.", Type.A, headerOnly(0x8000 | Wire.FLAG_TC)), "TC");
    }

    @Test
    void aQuestionLessNoErrorOrNxdomainDoesNot() {
        assertFalse(answers("www.example.com.", Type.A, headerOnly(0x8000)));
        assertFalse(answers("www.example.com.", Type.A, headerOnly(0x8000 | Wire.RCODE_NXDOMAIN)));
        assertFalse(answers("www.example.com.", Type.A, headerOnly(Wire.RCODE_FORMERR)), "QR=0");
    }

    /** A header with {@code flags} and every count zero. */
    private static byte[] headerOnly(int flags) {
        byte[] h = new byte[Wire.HEADER_BYTES];
        h[1] = 1;
        h[2] = (byte) (flags >> 8);
        h[3] = (byte) flags;
        return h;
    }

    private boolean answers(String name, int type, byte[] reply) {
        ByteBuf query = Unpooled.buffer();
        query.writeZero(QUERY_AT);
        query.writeBytes(Dns.query(1, name, type));
        query.readerIndex(QUERY_AT);
        assertEquals(QueryView.Check.QUERY, view.read(query));
        return Replies.answers(query, view.base(), view.questionEnd(), Unpooled.wrappedBuffer(reply));
    }

    private static byte[] reply(String name, int type) throws Exception {
        Message m = Dns.message(1, name, type);
        m.getHeader().setFlag(Flags.QR);
        m.addRecord(new ARecord(Name.fromString(name), DClass.IN, 60, InetAddress.getByName("192.0.2.1")),
                Section.ANSWER);
        return m.toWire();
    }
}
