package io.sluice.stress;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.testing.Dns;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.SOARecord;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** The benchmark upstream's answers, as dnsjava reads them: what scripts/flood relies on. */
class AnswerCommandTest {
    @AfterEach
    void noZones() {
        AnswerCommand.zones = new AnswerCommand.Zones(List.of(), List.of());
    }

    private static Message answer(String name) throws Exception {
        ByteBuf out = Unpooled.buffer();
        AnswerCommand.answer(Unpooled.wrappedBuffer(Dns.query(7, name, Type.A)), out);
        byte[] wire = new byte[out.readableBytes()];
        out.readBytes(wire);
        return Dns.parse(wire);
    }

    @Test
    void namesUnderAnNxZoneDoNotExistButThoseThatDo() throws Exception {
        AnswerCommand.zones = new AnswerCommand.Zones(List.of("Victim.Example."), List.of("www.victim.example"));
        Message nx = answer("x7f3a.victim.example.");
        assertEquals(Rcode.NXDOMAIN, nx.getRcode());
        assertEquals(7, nx.getHeader().getID());
        Record soa = nx.getSection(Section.AUTHORITY).get(0);
        assertEquals("victim.example.", soa.getName().toString());
        assertEquals(60, ((SOARecord) soa).getMinimum());
        Message www = answer("WWW.victim.example.");
        assertEquals(Rcode.NOERROR, www.getRcode());
        assertEquals("192.0.2.1", www.getSection(Section.ANSWER).get(0).rdataToString());
        assertEquals(Rcode.NOERROR, answer("victim.example.").getRcode(), "the apex is not under the zone");
        assertEquals(Rcode.NOERROR, answer("a.other.example.").getRcode());
    }
}
