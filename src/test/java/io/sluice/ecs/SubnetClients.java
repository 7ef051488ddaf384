package io.sluice.ecs;

import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.Socket;
import java.util.List;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.ClientSubnetOption;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.Message;
import org.xbill.DNS.Section;

/** Queries from clients on chosen addresses of 127/8, with and without Client Subnet, and what their answers carry. */
final class SubnetClients {
    private SubnetClients() {
    }

    static Message udpFrom(String source, RunningSluice s, byte[] query) throws IOException {
        try (DatagramSocket socket = Dns.sendFrom(source, s.address(), query)) {
            return Dns.parse(Dns.receive(socket));
        }
    }

    static Message tcpFrom(String source, RunningSluice s, byte[] query) throws IOException {
        try (Socket c = new Socket(s.address().getAddress(), s.address().getPort(), InetAddress.getByName(source), 0)) {
            c.setSoTimeout(10_000);
            Dns.writeFrame(c, query);
            return Dns.parse(Dns.readFrame(c));
        }
    }

    /** The address of the answer's first record, an A. */
    static String address(Message m) {
        return ((ARecord) m.getSection(Section.ANSWER).get(0)).getAddress().getHostAddress();
    }

    /** The answer's Client Subnet option, or null. */
    static ClientSubnetOption subnetOf(Message m) {
        List<EDNSOption> o = m.getOPT() == null ? List.of() : m.getOPT().getOptions(EDNSOption.Code.CLIENT_SUBNET);
        return o.isEmpty() ? null : (ClientSubnetOption) o.get(0);
    }

    static byte[] withSubnet(int id, String name, int type, String network, int prefix) throws IOException {
        return Dns.queryWithOpt(id, name, type, List.of(new ClientSubnetOption(prefix, InetAddress.getByName(network))));
    }
}
