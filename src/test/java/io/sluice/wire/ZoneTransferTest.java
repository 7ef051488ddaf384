package io.sluice.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.SOARecord;
import org.xbill.DNS.Section;

/** Where a zone transfer ends, however its records are split into messages. */
class ZoneTransferTest {
    private static final Name ZONE = name("z.test.");

    @Test
    void anAxfrEndsAtTheRepeatedSoaWhereverTheMessagesSplit() throws Exception {
        List<Record> records = List.of(soa(5), a("a"), a("b"), a("c"), soa(5));
        for (int split = 1; split < records.size(); split++) {
            assertEquals(List.of(false, true), lastFlags(Wire.TYPE_AXFR, records, split), "split after " + split);
        }
    }

    @Test
    void anIxfrWithDifferencesEndsAtTheThirdNewSoaNotTheSecond() throws Exception {
        // new serial 3; from 1 to 2, from 2 to 3; the last additions open with SOA 3
        List<Record> records = List.of(soa(3), soa(1), a("old"), soa(2), a("mid"), soa(2), a("mid"), soa(3),
                a("new"), soa(3));
        for (int split = 1; split < records.size(); split++) {
            assertEquals(List.of(false, true), lastFlags(Wire.TYPE_IXFR, records, split), "split after " + split);
        }
    }

    @Test
    void anIxfrAnsweredWithTheWholeZoneEndsAsAnAxfr() throws Exception {
        List<Record> records = List.of(soa(3), a("a"), a("b"), soa(3));
        assertEquals(List.of(false, true), lastFlags(Wire.TYPE_IXFR, records, 2));
    }

    @Test
    void anIxfrAnsweredByOneSoaNoNewerThanTheClientsEndsThere() throws Exception {
        for (long clientHas : new long[] {3, 4}) {
            ZoneTransfer t = started(Wire.TYPE_IXFR, clientHas);
            assertEquals(true, t.isLast(Unpooled.wrappedBuffer(message(List.of(soa(3))).toWire())), "client has " + clientHas);
        }
    }

    @Test
    void anErrorOrAMessageNotOpeningWithTheSoaEndsIt() throws Exception {
        ZoneTransfer t = started(Wire.TYPE_AXFR, -1);
        Message refused = message(List.of());
        refused.getHeader().setRcode(Rcode.REFUSED);
        assertEquals(true, t.isLast(Unpooled.wrappedBuffer(refused.toWire())));
        t = started(Wire.TYPE_AXFR, -1);
        assertEquals(true, t.isLast(Unpooled.wrappedBuffer(message(List.of(a("a"), soa(1))).toWire())));
    }

    /** isLast of each message, the records split into two messages after the first {@code split}. */
    private static List<Boolean> lastFlags(int qtype, List<Record> records, int split) {
        ZoneTransfer t = started(qtype, 1);
        List<Boolean> out = new ArrayList<>();
        for (List<Record> part : List.of(records.subList(0, split), records.subList(split, records.size()))) {
            out.add(t.isLast(Unpooled.wrappedBuffer(message(part).toWire())));
        }
        return out;
    }

    /** A transfer started by a query of {@code qtype}; an IXFR's carries SOA {@code clientSerial}. */
    private static ZoneTransfer started(int qtype, long clientSerial) {
        Message q = new Message(1);
        q.addRecord(Record.newRecord(ZONE, qtype, DClass.IN), Section.QUESTION);
        if (qtype == Wire.TYPE_IXFR) {
            q.addRecord(soa(clientSerial), Section.AUTHORITY);
        }
        ByteBuf wire = Unpooled.wrappedBuffer(q.toWire());
        QueryView view = new QueryView();
        assertEquals(QueryView.Check.QUERY, view.read(wire));
        ZoneTransfer t = new ZoneTransfer();
        t.start(wire, view);
        return t;
    }

    private static Message message(List<Record> answers) {
        Message m = new Message(1);
        m.getHeader().setFlag(Flags.QR);
        for (Record r : answers) {
            m.addRecord(r, Section.ANSWER);
        }
        return m;
    }

    private static Record soa(long serial) {
        return new SOARecord(ZONE, DClass.IN, 60, name("ns.z.test."), name("admin.z.test."), serial, 1, 1, 1, 1);
    }

    private static Record a(String label) {
        try {
            return new ARecord(name(label + ".z.test."), DClass.IN, 60, InetAddress.getByName("192.0.2.1"));
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Name name(String s) {
        try {
            return Name.fromString(s);
        } catch (org.xbill.DNS.TextParseException e) {
            throw new IllegalArgumentException(s, e);
        }
    }
}
