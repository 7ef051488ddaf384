package io.sluice.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.sluice.testing.Dns;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.ExtendedErrorCodeOption;
import org.xbill.DNS.Message;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** The answers sluice writes itself, checked byte by byte and through dnsjava's parser. */
class AnswersTest {
    private final QueryView view = new QueryView();

    @Test
    void echoesTheQuestionAndCopiesIdOpcodeRdCd() {
        // ID 0x1234, RD and CD set, one question "a.b" AAAA IN, no OPT
        ByteBuf q = hex("1234 0110 0001 0000 0000 0000 0161 0162 00 001c 0001");
        assertEquals(QueryView.Check.QUERY, view.read(q));
        ByteBuf a = Answers.withQuestion(UnpooledByteBufAllocator.DEFAULT, q, view, Wire.FLAG_RA, Wire.RCODE_REFUSED, 0,
                Answers.text("x"));
        assertEquals("1234" + "8195" + "0001" + "0000" + "0000" + "0000" + "01610162000" + "01c0001",
                ByteBufUtil.hexDump(a));
    }

    @Test
    void anEdnsQueryGetsAnOptWithTheDoBitAndAnExtendedError() throws Exception {
        Message m = Dns.message(7, "www.example.com.", Type.A);
        m.addRecord(new OPTRecord(4096, 0, 0, 0x8000, List.of()), Section.ADDITIONAL);
        byte[] wire = m.toWire();
        ByteBuf q = Unpooled.wrappedBuffer(wire);
        view.read(q);
        ByteBuf a = Answers.withQuestion(UnpooledByteBufAllocator.DEFAULT, q, view, Wire.FLAG_RA,
                Wire.RCODE_REFUSED, Answers.EDE_NO_REACHABLE_AUTHORITY, Answers.text("limit"));
        byte[] out = ByteBufUtil.getBytes(a);
        Message r = new Message(out);
        assertEquals(Rcode.REFUSED, r.getRcode());
        OPTRecord opt = r.getOPT();
        assertEquals(Answers.ADVERTISED_UDP_PAYLOAD, opt.getPayloadSize());
        assertEquals(0x8000, opt.getFlags() & 0x8000, "DO copied");
        ExtendedErrorCodeOption ede = (ExtendedErrorCodeOption) opt.getOptions().get(0);
        assertEquals(Answers.EDE_NO_REACHABLE_AUTHORITY, ede.getErrorCode());
        assertEquals("limit", ede.getText());
        assertTrue(out.length <= wire.length + 6 + "limit".length(), "no amplification beyond the EDE");
    }

    @Test
    void findsTheOptPastCompressedRecords() throws Exception {
        // question a.b A, one answer record whose name points back to the question (c00c), then OPT
        ByteBuf q = hex("0001 0100 0001 0001 0000 0001 0161 0162 00 0001 0001"
                + " c00c 0001 0001 00000000 0004 c0000201"
                + " 00 0029 1000 00000000 0000");
        view.read(q);
        ByteBuf a = Answers.withQuestion(UnpooledByteBufAllocator.DEFAULT, q, view, 0, Wire.RCODE_SERVFAIL, 0, null);
        byte[] out = ByteBufUtil.getBytes(a);
        assertEquals(1, out[11], "ARCOUNT 1: the OPT was found");
        assertArrayEquals(HexFormat.of().parseHex("00002904d0"), Arrays.copyOfRange(out, out.length - 11, out.length - 6));
    }

    @Test
    void headerOnlyAnswerIsTwelveBytes() {
        ByteBuf q = hex("beef 2900 0001 0000 0000 0000 00 0006 0001");
        assertEquals(QueryView.Check.NOTIMP, view.read(q));
        ByteBuf a = Answers.headerOnly(UnpooledByteBufAllocator.DEFAULT, q, view, Wire.RCODE_NOTIMP);
        assertEquals("beef" + "a904" + "0000000000000000", ByteBufUtil.hexDump(a));
    }

    @Test
    void headerOnlyAnswerToAnEdnsQueryCarriesAnOpt() {
        // two questions (FORMERR), then an OPT with DO set and a 4096-byte payload
        ByteBuf q = hex("beef 0100 0002 0000 0000 0001 00 0001 0001 00 0001 0001 00 0029 1000 00008000 0000");
        assertEquals(QueryView.Check.FORMERR, view.read(q));
        ByteBuf a = Answers.headerOnly(UnpooledByteBufAllocator.DEFAULT, q, view, Wire.RCODE_FORMERR);
        assertEquals("beef" + "8101" + "000000000000" + "0001" + "00" + "0029" + "04d0" + "00008000" + "0000",
                ByteBufUtil.hexDump(a));
        assertTrue(a.readableBytes() <= q.readableBytes(), "no amplification");
    }

    @Test
    void aQuestionLessQueryIsAQueryOnlyWithACookie() {
        ByteBuf cookie = hex("0001 0000 0000 0000 0000 0001 00 0029 1000 00000000 000c 000a 0008 0102030405060708");
        assertEquals(QueryView.Check.QUERY, view.read(cookie));
        assertFalse(view.hasQuestion());
        ByteBuf servfail = Answers.withQuestion(UnpooledByteBufAllocator.DEFAULT, cookie, view, Wire.FLAG_RA,
                Wire.RCODE_SERVFAIL, 0, null);
        assertEquals("0001" + "8082" + "0000" + "00000000" + "0001" + "00" + "0029" + "04d0" + "00000000" + "0000",
                ByteBufUtil.hexDump(servfail));
        ByteBuf padding = hex("0001 0000 0000 0000 0000 0001 00 0029 1000 00000000 0008 000c 0004 00000000");
        assertEquals(QueryView.Check.FORMERR, view.read(padding));
    }

    private static ByteBuf hex(String s) {
        return Unpooled.wrappedBuffer(HexFormat.of().parseHex(s.replace(" ", "")));
    }
}
