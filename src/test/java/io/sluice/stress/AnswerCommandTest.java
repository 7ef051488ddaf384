package io.sluice.stress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.testing.Dns;
import io.sluice.testing.Ports;
import io.sluice.testing.SluiceProcess;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
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

    /** --delay holds each answer back, as a resolver's miss does: never sooner (a lower bound, which cannot flake). */
    @Test
    void aDelayHoldsEachAnswerBack() throws Exception {
        int port = Ports.freeUdpAndTcp();
        Process p = SluiceProcess.command("answer", "--listen", "127.0.0.1:" + port, "--delay", "300ms").start();
        try {
            InetSocketAddress at = new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
            byte[] ready = null;
            for (int i = 0; i < 100 && ready == null && p.isAlive(); i++) {
                ready = Dns.udp(at, Dns.query(1, "ready.example.", Type.A), 500);
            }
            assertNotNull(ready, "the answer server answers");
            long start = System.nanoTime();
            byte[] late = Dns.udp(at, Dns.query(2, "late.example.", Type.A), 5000);
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertEquals(2, Dns.id(late));
            assertTrue(tookMillis >= 300, "held back 300 ms: " + tookMillis);
        } finally {
            p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
        assertEquals(2, SluiceProcess.runToExit("answer", "--delay", "soon").code(), "a bad duration is a usage error");
    }
}
