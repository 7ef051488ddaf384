package io.sluice.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.sluice.limit.ManualClock;
import io.sluice.testing.Dns;
import io.sluice.testing.StageHarness;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Opcode;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** The message check alone, on the stage harness: what is not a query sluice passes on is answered or dropped, and counted. */
class MessageCheckStageTest {
    private final StageHarness h = new StageHarness(new ManualClock());

    @Test
    void aWellFormedQueryGoesOnToTheUpstream() {
        h.ask(Dns.query(1, "www.example.com.", Type.A));
        assertEquals(1, h.upstreamQueries());
        assertEquals(0, h.metrics().count("formerr"));
    }

    @Test
    void tooShortForAnIdOrAResponseIsDroppedAndCounted() throws Exception {
        assertNull(h.ask(new byte[] {7}));
        assertEquals(Outcome.NOT_A_QUERY, h.lastOutcome());
        Message response = Message.newQuery(Record.newRecord(Name.fromString("example.com."), Type.A, 1));
        response.getHeader().setFlag(Flags.QR);
        assertNull(h.ask(response.toWire()));
        assertEquals(Outcome.NOT_A_QUERY, h.lastOutcome());
        assertEquals(1, h.metrics().count("dropped_no_id"));
        assertEquals(1, h.metrics().count("dropped_responses"));
        assertEquals(0, h.upstreamQueries());
    }

    @Test
    void aTruncatedQuestionGetsFormerrWithItsIdAndAnOptWhenTheQueryHadOne() throws Exception {
        byte[] whole = Dns.query(0x1234, "www.example.com.", Type.A);
        byte[] cut = Arrays.copyOf(whole, whole.length - 3);
        Message formerr = new Message(h.ask(cut));
        assertEquals(Rcode.FORMERR, formerr.getRcode());
        assertEquals(0x1234, formerr.getHeader().getID());
        Message withOpt = Message.newQuery(Record.newRecord(Name.fromString("www.example.com."), Type.A, 1));
        withOpt.getHeader().setID(0x4321);
        withOpt.addRecord(new OPTRecord(1232, 0, 0), Section.ADDITIONAL);
        byte[] wire = withOpt.toWire();
        wire[11] = 2; // ARCOUNT 2: a record the message does not hold
        Message answer = new Message(h.ask(wire));
        assertEquals(Rcode.FORMERR, answer.getRcode());
        assertEquals(0x4321, answer.getHeader().getID());
        assertNotNull(answer.getOPT(), "the query had an OPT: so does its FORMERR");
        assertEquals(2, h.metrics().count("formerr"));
        assertEquals(0, h.upstreamQueries());
    }

    @Test
    void anotherOpcodeGetsNotimpWithItsQuestionEchoed() throws Exception {
        Message notify = Message.newQuery(Record.newRecord(Name.fromString("example.com."), Type.SOA, 1));
        notify.getHeader().setOpcode(Opcode.NOTIFY);
        Message answer = new Message(h.ask(notify.toWire()));
        assertEquals(Rcode.NOTIMP, answer.getRcode());
        assertEquals(Name.fromString("example.com."), answer.getQuestion().getName());
        assertEquals(1, h.metrics().count("notimp"));
        assertEquals(0, h.upstreamQueries());
    }
}
