package io.sluice.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.sluice.testing.Dns;
import java.net.InetAddress;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.ClientSubnetOption;
import org.xbill.DNS.DClass;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.Flags;
import org.xbill.DNS.GenericEDNSOption;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** Which replies answer a query's Client Subnet (RFC 7871 section 7.3), and which are for every network. */
class ClientSubnetOptionTest {
    private static final String NAME = "www.example.";

    private static ByteBuf query(int source, String network) throws Exception {
        return Unpooled.wrappedBuffer(Dns.queryWithOpt(1, NAME, Type.A,
                List.of(new ClientSubnetOption(source, InetAddress.getByName(network)))));
    }

    /** An answer to {@link #NAME} whose OPT carries {@code options} (none: no OPT record). */
    private static ByteBuf reply(EDNSOption... options) throws Exception {
        return reply(Rcode.NOERROR, options);
    }

    private static ByteBuf reply(int rcode, EDNSOption... options) throws Exception {
        Message r = new Message(1);
        r.getHeader().setFlag(Flags.QR);
        r.getHeader().setRcode(rcode);
        r.addRecord(Record.newRecord(Name.fromString(NAME), Type.A, DClass.IN), Section.QUESTION);
        r.addRecord(new ARecord(Name.fromString(NAME), DClass.IN, 60, InetAddress.getByName("192.0.2.1")),
                Section.ANSWER);
        if (options.length > 0) {
            r.addRecord(new OPTRecord(1232, 0, 0, 0, List.of(options)), Section.ADDITIONAL);
        }
        return Unpooled.wrappedBuffer(r.toWire());
    }

    private static ClientSubnetOption option(int source, int scope, String network) throws Exception {
        return new ClientSubnetOption(source, scope, InetAddress.getByName(network));
    }

    private static boolean answers(ByteBuf query, ByteBuf reply) {
        QueryView view = new QueryView();
        view.read(query);
        return ClientSubnet.answers(query, ClientSubnet.find(query, view), reply);
    }

    private static boolean forEveryNetwork(ByteBuf query, ByteBuf reply) {
        QueryView view = new QueryView();
        view.read(query);
        return ClientSubnet.forEveryNetwork(query, view, reply);
    }

    @Test
    void aReplyAnswersWithTheQuerysNetworkOrWithout() throws Exception {
        ByteBuf q = query(24, "127.0.1.0");
        assertTrue(answers(q, reply(option(24, 24, "127.0.1.0"))), "its echo, with a scope");
        assertTrue(answers(q, reply()), "no OPT record");
        assertTrue(answers(q, reply(new GenericEDNSOption(EDNSOption.Code.NSID, new byte[] {1}))), "no option");
        assertFalse(answers(q, reply(option(24, 24, "127.0.2.0"))), "another address");
        assertFalse(answers(q, reply(option(16, 16, "127.0.0.0"))), "another source prefix");
        assertFalse(answers(q, reply(option(24, 0, "::"))), "another family");
        assertFalse(answers(q, reply(new GenericEDNSOption(EDNSOption.Code.CLIENT_SUBNET, new byte[] {0, 3, 24, 0, 1}))),
                "a family RFC 7871 does not know");
        ByteBuf unnamed = query(0, "0.0.0.0");
        assertTrue(answers(unnamed, reply(option(24, 24, "198.51.100.0"))), "a query naming no network takes any");
    }

    @Test
    void theClientsOptionTakesTheUpstreamsPlaceAndAMalformedOptLeavesNoneOfIts() throws Exception {
        byte[] clients = new byte[4 + 4 + 3];
        ByteBuf c = Unpooled.wrappedBuffer(clients).clear();
        ClientSubnet.write(c, InetAddress.getByName("127.0.1.0").getAddress(), 24, 24);
        ByteBuf out = ClientSubnet.replaceInAnswer(Unpooled.buffer().alloc(),
                Unpooled.buffer().writeBytes(reply(option(24, 24, "198.51.100.0"))), clients, clients.length);
        ClientSubnetOption echoed = (ClientSubnetOption) new Message(ByteBufUtil.getBytes(out)).getOPT()
                .getOptions(EDNSOption.Code.CLIENT_SUBNET).get(0);
        assertEquals(InetAddress.getByName("127.0.1.0"), echoed.getAddress());

        ByteBuf malformed = Unpooled.buffer().writeBytes(reply(option(24, 24, "198.51.100.0"))).writeByte(0);
        int rdLengthAt = malformed.writerIndex() - 1 - (4 + 4 + 3) - 2;
        malformed.setShort(rdLengthAt, malformed.getUnsignedShort(rdLengthAt) + 1); // a stray octet after the options
        out = ClientSubnet.replaceInAnswer(Unpooled.buffer().alloc(), malformed, clients, clients.length);
        assertEquals(-1, ClientSubnet.findInMessage(out), "the upstream's option, naming another network, is gone");
    }

    @Test
    void aReplyIsForEveryNetworkWithScopeZeroOrWithoutTheOption() throws Exception {
        ByteBuf q = query(24, "127.0.1.0");
        assertTrue(forEveryNetwork(q, reply(option(24, 0, "127.0.1.0"))));
        assertTrue(forEveryNetwork(q, reply()), "RFC 7871 section 7.3: as a scope of 0");
        assertFalse(forEveryNetwork(q, reply(Rcode.SERVFAIL)), "a failure may be one network's alone");
        assertFalse(forEveryNetwork(q, reply(option(24, 24, "127.0.1.0"))), "for the /24 alone");
        assertFalse(forEveryNetwork(q, reply(option(24, 0, "127.0.2.0"))), "another network's");
        assertFalse(forEveryNetwork(query(0, "0.0.0.0"), reply()), "a query naming no network keeps its answer");
    }
}
