package io.sluice.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.testing.Dns;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.GenericEDNSOption;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.TXTRecord;
import org.xbill.DNS.Type;

class CookieOptionTest {
    private static final byte[] CLIENT = {1, 2, 3, 4, 5, 6, 7, 8};
    private static final long CLIENT_LONG = 0x0102030405060708L;
    private static final long HEAD = 0x01000000_6b156c11L;
    private static final long HASH = 0x1122334455667788L;

    private static ByteBuf roomy(byte[] wire) {
        return Unpooled.buffer(wire.length, 4096).writeBytes(wire);
    }

    private static byte[] bytes(ByteBuf b) {
        byte[] out = new byte[b.readableBytes()];
        b.getBytes(b.readerIndex(), out);
        return out;
    }

    private static org.xbill.DNS.CookieOption cookieOf(Message m) {
        List<EDNSOption> cookies = m.getOPT().getOptions(EDNSOption.Code.COOKIE);
        assertEquals(1, cookies.size(), m.toString());
        return (org.xbill.DNS.CookieOption) cookies.get(0);
    }

    private static void assertSluicesCookie(Message m) {
        org.xbill.DNS.CookieOption c = cookieOf(m);
        assertArrayEquals(CLIENT, c.getClientCookie());
        assertEquals("010000006b156c111122334455667788",
                java.util.HexFormat.of().formatHex(c.getServerCookie().get()));
    }

    /** {@code answer} with sluice's cookie of {@code hash}, as {@link CookieOption#put} makes it. */
    private static ByteBuf put(ByteBuf answer, long hash) {
        return CookieOption.put(Unpooled.buffer().alloc(), answer, new byte[CookieOption.OPTION_BYTES], CLIENT_LONG,
                HEAD, hash);
    }

    @Test
    void aQuerysCookieIsFoundAndTakenOutLeavingItsOtherOptions() throws Exception {
        EDNSOption nsid = new GenericEDNSOption(EDNSOption.Code.NSID, new byte[0]);
        EDNSOption padding = new GenericEDNSOption(EDNSOption.Code.PADDING, new byte[5]);
        ByteBuf q = roomy(Dns.queryWithOpt(7, "www.example.", Type.A, List.of(nsid, new org.xbill.DNS.CookieOption(CLIENT), padding)));
        QueryView view = new QueryView();
        assertEquals(QueryView.Check.QUERY, view.read(q));
        int at = CookieOption.find(q, view);
        assertEquals(CookieOption.CLIENT_BYTES, CookieOption.dataLength(q, at));
        assertEquals(CLIENT_LONG, CookieOption.client(q, at));
        int before = q.readableBytes();
        CookieOption.remove(q, view, at);
        assertEquals(before - 12, q.readableBytes());
        assertEquals(q.readableBytes(), view.length());
        Message m = new Message(bytes(q));
        OPTRecord opt = m.getOPT();
        assertTrue(opt.getOptions(EDNSOption.Code.COOKIE).isEmpty());
        assertEquals(1, opt.getOptions(EDNSOption.Code.NSID).size());
        assertEquals(1, opt.getOptions(EDNSOption.Code.PADDING).size());
        assertEquals(-1, CookieOption.find(q, view));
        assertEquals(QueryView.Check.QUERY, new QueryView().read(q), "still a well-formed query");
    }

    @Test
    void onlyCookiesOfTheLengthsRfc7873AllowsAreWellFormed() {
        for (int length = 0; length < 50; length++) {
            assertEquals(length == 8 || length >= 16 && length <= 40, CookieOption.wellFormed(length), "length " + length);
        }
    }

    @Test
    void anAnswerWhoseOptIsLastTakesTheCookieInPlace() throws Exception {
        Message answer = Dns.answer("www.example.", 300);
        answer.addRecord(new OPTRecord(1232, 0, 0), Section.ADDITIONAL);
        ByteBuf b = roomy(answer.toWire());
        ByteBuf out = put(b, HASH);
        assertSame(b, out);
        Message m = new Message(bytes(out));
        assertSluicesCookie(m);
        assertEquals(1, m.getSection(Section.ANSWER).size());

        ByteBuf again = put(out, HASH + 1);
        assertSame(out, again, "a cookie of sluice's size is overwritten where it is");
        assertEquals("010000006b156c111122334455667789", java.util.HexFormat.of().formatHex(
                cookieOf(new Message(bytes(again))).getServerCookie().get()), "the new server cookie");
    }

    @Test
    void anotherCookieARecordAfterTheOptOrNoOptAreWrittenAnew() throws Exception {
        Message upstreams = Dns.answer("www.example.", 300);
        upstreams.addRecord(new OPTRecord(1232, 0, 0, 0, List.of(new org.xbill.DNS.CookieOption(new byte[8], new byte[8]))),
                Section.ADDITIONAL);
        ByteBuf b = roomy(upstreams.toWire());
        ByteBuf out = put(b, HASH);
        assertSame(b, out, "another cookie cut out where it was, sluice's added after, in the room the buffer has");
        assertSluicesCookie(new Message(bytes(out)));

        Message trailing = Dns.answer("www.example.", 300);
        trailing.addRecord(new OPTRecord(1232, 0, 0), Section.ADDITIONAL);
        byte[] wire = trailing.toWire();
        // a record after the OPT, as a TSIG is: appended by hand, dnsjava puts OPT last
        Record extra = new TXTRecord(Name.fromString("after.example."), DClass.IN, 0, "kept");
        byte[] extraWire = extra.toWireCanonical();
        ByteBuf withExtra = roomy(wire).writeBytes(extraWire);
        withExtra.setShort(Wire.ARCOUNT_OFFSET, withExtra.getUnsignedShort(Wire.ARCOUNT_OFFSET) + 1);
        Message rebuilt = new Message(bytes(put(withExtra, HASH)));
        assertSluicesCookie(rebuilt);
        assertEquals(2, rebuilt.getSection(Section.ADDITIONAL).size(), "the record after the OPT kept");

        Message noOpt = Dns.answer("www.example.", 300);
        Message withOpt = new Message(bytes(put(Unpooled.wrappedBuffer(noOpt.toWire()), HASH)));
        assertSluicesCookie(withOpt);
        assertTrue(withOpt.getSection(Section.ANSWER).get(0) instanceof ARecord);
    }
}
