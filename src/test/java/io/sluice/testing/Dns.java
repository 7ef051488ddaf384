package io.sluice.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** A raw DNS client over real sockets: exact bytes out, exact bytes back. */
public final class Dns {
    private Dns() {
    }

    public static byte[] query(int id, String name, int type) {
        return message(id, name, type).toWire();
    }

    public static Message message(int id, String name, int type) {
        try {
            Message m = Message.newQuery(Record.newRecord(Name.fromString(name), type, DClass.IN));
            m.getHeader().setID(id);
            return m;
        } catch (IOException e) {
            throw new IllegalArgumentException(name, e);
        }
    }

    /** An upstream's answer to {@code name}'s A query: one record, 192.0.2.1, of {@code ttl} seconds. */
    public static Message answer(String name, long ttl) {
        Message m = message(0, name, Type.A);
        m.getHeader().setFlag(Flags.QR);
        m.getHeader().setFlag(Flags.RA);
        try {
            m.addRecord(new ARecord(Name.fromString(name), DClass.IN, ttl, InetAddress.getByName("192.0.2.1")),
                    Section.ANSWER);
        } catch (IOException e) {
            throw new IllegalArgumentException(name, e);
        }
        return m;
    }

    public static byte[] queryWithOpt(int id, String name, int type, List<EDNSOption> options) {
        Message m = message(id, name, type);
        m.addRecord(new OPTRecord(1232, 0, 0, 0, options), Section.ADDITIONAL);
        return m.toWire();
    }

    /** Sends one datagram and returns the first reply, or null when none comes within the timeout. */
    public static byte[] udp(InetSocketAddress server, byte[] query, int timeoutMillis) throws IOException {
        try (DatagramSocket s = new DatagramSocket()) {
            s.setSoTimeout(timeoutMillis);
            s.send(new DatagramPacket(query, query.length, server));
            byte[] buf = new byte[65535];
            DatagramPacket p = new DatagramPacket(buf, buf.length);
            try {
                s.receive(p);
            } catch (SocketTimeoutException e) {
                return null;
            }
            return Arrays.copyOf(p.getData(), p.getLength());
        }
    }

    public static byte[] udp(InetSocketAddress server, byte[] query) throws IOException {
        return udp(server, query, 5000);
    }

    /** Sends one framed query on a new TCP connection and reads one framed reply. */
    /**
     * Sends {@code query} to {@code server} from a new socket on {@code from}, for a test that sends
     * many before it reads any answer ({@link #receive}); the caller closes it.
     */
    public static DatagramSocket sendFrom(String from, InetSocketAddress server, byte[] query) throws IOException {
        DatagramSocket c = new DatagramSocket(new InetSocketAddress(from, 0));
        c.setSoTimeout(10_000);
        c.send(new DatagramPacket(query, query.length, server));
        return c;
    }

    /** {@link #sendFrom} 127.0.0.1. */
    public static DatagramSocket send(InetSocketAddress server, byte[] query) throws IOException {
        return sendFrom("127.0.0.1", server, query);
    }

    /** The next datagram {@code socket} receives, waiting as long as its timeout. */
    public static byte[] receive(DatagramSocket socket) throws IOException {
        byte[] buf = new byte[65_535];
        DatagramPacket p = new DatagramPacket(buf, buf.length);
        socket.receive(p);
        return Arrays.copyOf(buf, p.getLength());
    }

    public static byte[] tcp(InetSocketAddress server, byte[] query) throws IOException {
        try (Socket s = new Socket(server.getAddress(), server.getPort())) {
            s.setSoTimeout(5000);
            writeFrame(s, query);
            return readFrame(s);
        }
    }

    public static void writeFrame(Socket s, byte[] message) throws IOException {
        DataOutputStream out = new DataOutputStream(s.getOutputStream());
        out.writeShort(message.length);
        out.write(message);
        out.flush();
    }

    /** {@code messages} framed for TCP one after another, to be written at once (one segment on loopback). */
    public static byte[] frames(byte[]... messages) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] m : messages) {
            out.write(m.length >> 8);
            out.write(m.length);
            out.writeBytes(m);
        }
        return out.toByteArray();
    }

    public static byte[] readFrame(Socket s) throws IOException {
        DataInputStream in = new DataInputStream(s.getInputStream());
        int len = in.readUnsignedShort();
        return in.readNBytes(len);
    }

    public static Message parse(byte[] wire) throws IOException {
        return new Message(wire);
    }

    public static int id(byte[] wire) {
        return ((wire[0] & 0xFF) << 8) | (wire[1] & 0xFF);
    }

    public static int rcode(byte[] wire) {
        return wire[3] & 0x0F;
    }

    /** Sends all queries at once (round robin over the targets), then counts the rcodes of the replies. */
    public static int[] burst(List<InetSocketAddress> targets, List<String> names) throws Exception {
        int[] rcodes = new int[24];
        List<DatagramChannel> chans = new ArrayList<>();
        try (Selector readable = Selector.open()) {
            for (InetSocketAddress t : targets) {
                DatagramChannel c = DatagramChannel.open(StandardProtocolFamily.INET);
                chans.add(c);
                c.setOption(StandardSocketOptions.SO_RCVBUF, 1 << 20);
                c.configureBlocking(false);
                c.connect(t);
                c.register(readable, SelectionKey.OP_READ);
            }
            for (int i = 0; i < names.size(); i++) {
                chans.get(i % chans.size()).write(ByteBuffer.wrap(Dns.query(i, names.get(i), Type.A)));
            }
            int got = 0;
            ByteBuffer buf = ByteBuffer.allocate(4096);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            for (long left = 10_000; got < names.size() && left > 0; left = (deadline - System.nanoTime()) / 1_000_000) {
                readable.select(left); // until a reply comes
                readable.selectedKeys().clear();
                for (DatagramChannel c : chans) {
                    buf.clear();
                    while (c.read(buf) > 0) {
                        rcodes[buf.get(3) & 0x0F]++;
                        got++;
                        buf.clear();
                    }
                }
            }
            assertEquals(names.size(), got, "every query answered");
            return rcodes;
        } finally {
            for (DatagramChannel c : chans) {
                c.close();
            }
        }
    }

    /** {@code n} names under {@code domain}: h0.domain., h1.domain., ... */
    public static List<String> names(String domain, int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add("h" + i + "." + domain + ".");
        }
        return out;
    }

    /** {@code m} is a stale answer (RFC 8767): NOERROR, its first answer's TTL 30, an Extended DNS Error "Stale Answer". */
    public static void assertStale(Message m, String why) {
        assertEquals(org.xbill.DNS.Rcode.NOERROR, m.getRcode(), why);
        assertEquals(30, m.getSection(Section.ANSWER).get(0).getTTL(), why + ": TTL 30");
        EDNSOption ede = m.getOPT().getOptions(EDNSOption.Code.EDNS_EXTENDED_ERROR).get(0);
        assertEquals(org.xbill.DNS.ExtendedErrorCodeOption.STALE_ANSWER,
                ((org.xbill.DNS.ExtendedErrorCodeOption) ede).getErrorCode(), why + ": EDE 3");
    }
}
