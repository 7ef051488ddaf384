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

    private boolean answers(String name, int type, byte[] reply) {
        ByteBuf query = Unpooled.buffer();
        query.writeZero(QUERY_AT);
        query.writeBytes(Dns.query(1, name, type));
        query.readerIndex(QUERY_AT);
        assertEquals(QueryView.Check.QUERY, view.read(query));
        return Replies.answersQuestion(query, view.base(), view.questionEnd(), Unpooled.wrappedBuffer(reply));
    }

    private static byte[] reply(String name, int type) throws Exception {
        Message m = Dns.message(1, name, type);
        m.getHeader().setFlag(Flags.QR);
        m.addRecord(new ARecord(Name.fromString(name), DClass.IN, 60, InetAddress.getByName("192.0.2.1")),
                Section.ANSWER);
        return m.toWire();
    }
}
