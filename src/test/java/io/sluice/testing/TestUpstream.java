package io.sluice.testing;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.xbill.DNS.AAAARecord;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.ClientSubnetOption;
import org.xbill.DNS.CookieOption;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.ExtendedErrorCodeOption;
import org.xbill.DNS.GenericEDNSOption;
import org.xbill.DNS.MXRecord;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.TXTRecord;
import org.xbill.DNS.TcpKeepaliveOption;
import org.xbill.DNS.Type;

/**
 * A small authoritative DNS server on 127.0.0.1, UDP and TCP on one port, for tests. It answers
 * every name under {@code example.} with fixed records, {@code nx.example.} with NXDOMAIN and
 * {@code big.example. TXT} with about 3000 bytes (TC over UDP). It can be told to stay silent, to
 * send forged replies before the genuine one, or to hold replies until many queries have arrived.
 */
public final class TestUpstream implements AutoCloseable {
    public enum Mode { ANSWER, SILENT, FORGE_FIRST }

    public static final String BIG = "big.example.";
    /** About 550 bytes of TXT: a UDP answer just over the classic 512. */
    public static final String MID = "mid.example.";
    /** About 6,000 bytes of TXT: over sluice's 4,096-byte UDP reply slot. */
    public static final String HUGE = "huge.example.";
    /** About 40,000 bytes of TXT: a TCP answer of its own size class. */
    public static final String GIANT = "giant.example.";
    public static final String NX = "nx.example.";
    /** Names under this one get BADCOOKIE (RFC 7873), as from a server that insists on cookies. */
    public static final String BAD_COOKIE = "badcookie.example.";
    /**
     * Names under this one, asked with Client Subnet, are answered with the option of another
     * network (198.51.100.0/24, scope 24): a reply RFC 7871 section 7.3 drops.
     */
    public static final String OTHER_NETWORK = "othernet.example.";
    /** Names under this one, asked with Client Subnet, are answered with its echo, scoped to its source prefix. */
    public static final String BY_NETWORK = "bynetwork.example.";
    /**
     * Names starting with this label get a FORMERR without a question section, as nsd answers a
     * query it cannot parse (two OPT records, a bad count).
     */
    public static final String UNPARSEABLE = "unparseable";

    private final DatagramSocket udp;
    private final DatagramSocket forger;
    private final ServerSocket tcp;
    private final List<Thread> threads = new ArrayList<>();
    private final List<Socket> connections = new CopyOnWriteArrayList<>();
    private final AtomicReference<Mode> mode = new AtomicReference<>(Mode.ANSWER);
    private final AtomicReference<byte[]> lastQuery = new AtomicReference<>();
    private final AtomicReference<SocketAddress> lastSender = new AtomicReference<>();
    private final Queue<Integer> senderPorts = new ConcurrentLinkedQueue<>();
    private final AtomicInteger udpQueries = new AtomicInteger();
    private final AtomicInteger tcpQueries = new AtomicInteger();
    private final List<DatagramPacket> held = new ArrayList<>();
    private volatile int holdUntil;
    private volatile String forgedAddress;
    private volatile int randomForgeries;
    private volatile BooleanSupplier randomForgeriesRead = () -> true;
    private volatile boolean lowercaseQuestions;
    private volatile boolean ignoresPayloadSize;
    private final Queue<String> receivedNames = new ConcurrentLinkedQueue<>();
    private volatile boolean closeTcpAfterAnswer;
    private volatile long delayMillis;
    private volatile String ignoredPrefix;
    private volatile Name refused;
    private volatile boolean closed;
    private final java.util.Map<Name, Long> ttls = new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.Set<Name> servfails = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private volatile Name zone;
    private volatile java.util.Set<Name> zoneNames = java.util.Set.of();

    public TestUpstream() throws IOException {
        DatagramSocket u = null;
        ServerSocket t = null;
        for (int attempt = 0; t == null; attempt++) {
            u = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            try {
                t = new ServerSocket(u.getLocalPort(), 50, InetAddress.getLoopbackAddress());
            } catch (IOException e) {
                u.close();
                if (attempt > 20) {
                    throw e;
                }
            }
        }
        udp = u;
        udp.setReceiveBufferSize(4 << 20);
        tcp = t;
        forger = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        start("udp", this::serveUdp);
        start("tcp", this::acceptTcp);
    }

    /** Answers for {@code name} carry this TTL instead of 300. */
    public void ttl(String name, long seconds) throws IOException {
        ttls.put(Name.fromString(name), seconds);
    }

    /** Queries for {@code name} get SERVFAIL. */
    public void servfail(String name) throws IOException {
        servfails.add(Name.fromString(name));
    }

    /** Stops answering {@code name} with SERVFAIL. */
    public void noServfail(String name) throws IOException {
        servfails.remove(Name.fromString(name));
    }

    /**
     * Names under {@code origin} other than {@code names} (and the origin) do not exist: NXDOMAIN
     * with the zone's SOA, TTL 300 and MINIMUM 60, as an authoritative server answers; a type a
     * name lacks gets NODATA with the same SOA.
     */
    public void zone(String origin, String... names) throws IOException {
        java.util.Set<Name> set = new java.util.HashSet<>();
        Name o = Name.fromString(origin);
        set.add(o);
        for (String n : names) {
            set.add(Name.fromString(n));
        }
        zoneNames = set;
        zone = o;
    }

    /** {@link #answer}, with what this upstream was told of names: TTLs, SERVFAILs, a zone; a server cookie when asked. */
    private Message reply(Message q) throws IOException {
        Message r = answer(q);
        Record question = q.getQuestion();
        if (question == null) {
            return r;
        }
        Name n = question.getName();
        if (servfails.contains(n)) {
            r.getHeader().setRcode(Rcode.SERVFAIL);
            r.removeAllRecords(Section.ANSWER);
            return r;
        }
        Name z = zone;
        if (z != null && n.subdomain(z) && (!zoneNames.contains(n) || r.getSection(Section.ANSWER).isEmpty())) {
            if (!zoneNames.contains(n)) {
                r.getHeader().setRcode(Rcode.NXDOMAIN);
                r.removeAllRecords(Section.ANSWER);
            } // else NODATA: the name exists, not with this type
            r.addRecord(new org.xbill.DNS.SOARecord(z, DClass.IN, 300, Name.fromString("ns", z),
                    Name.fromString("admin", z), 1, 3600, 600, 86400, 60), Section.AUTHORITY);
            return r;
        }
        Long ttl = ttls.get(n);
        if (ttl != null) {
            List<Record> answers = r.getSection(Section.ANSWER);
            r.removeAllRecords(Section.ANSWER);
            for (Record a : answers) {
                r.addRecord(Record.newRecord(a.getName(), a.getType(), a.getDClass(), ttl, a.rdataToWireCanonical()),
                        Section.ANSWER);
            }
        }
        OPTRecord opt = q.getOPT();
        if (opt != null) {
            for (EDNSOption o : opt.getOptions()) {
                if (o instanceof CookieOption c) {
                    r.removeAllRecords(Section.ADDITIONAL);
                    r.addRecord(new OPTRecord(1232, 0, 0, 0, List.of(new CookieOption(c.getClientCookie(),
                            new byte[] {1, 2, 3, 4, 5, 6, 7, 8}))), Section.ADDITIONAL);
                }
            }
        }
        return r;
    }

    public InetSocketAddress address() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), udp.getLocalPort());
    }

    public String hostPort() {
        return "127.0.0.1:" + udp.getLocalPort();
    }

    public void mode(Mode m) {
        mode.set(m);
    }

    /** UDP queries whose name starts with {@code label} (say "junk") get no answer; null: none. */
    public void ignoreNamesStartingWith(String label) {
        ignoredPrefix = label;
    }

    private boolean ignored(byte[] query) {
        String prefix = ignoredPrefix;
        if (prefix == null || query.length < 13 + prefix.length()) {
            return false;
        }
        // the first label's bytes follow the 12-byte header and its length octet
        return new String(query, 13, prefix.length(), StandardCharsets.US_ASCII).equalsIgnoreCase(prefix);
    }

    /** Queries for exactly {@code name} get REFUSED (say ".", as a resolver that cannot reach the root); null: none. */
    public void refuse(String name) throws IOException {
        refused = name == null ? null : Name.fromString(name);
    }

    /** Waits this long before each answer (answers are then sent one after another). */
    public void delayMillis(long ms) {
        delayMillis = ms;
    }

    /** Closes each TCP connection right after its first answer, as a server tidying up would. */
    public void closeTcpAfterAnswer(boolean close) {
        closeTcpAfterAnswer = close;
    }

    /** Holds UDP replies until {@code n} queries are waiting, then sends them all. */
    public void holdUntil(int n) {
        holdUntil = n;
    }

    /** Holds every reply, UDP and TCP, from now on until {@link #release}. */
    public void hold() {
        holdUntil = Integer.MAX_VALUE;
    }

    /** Sends every reply held ({@link #hold}), and answers at once from now on. */
    public void release() throws IOException {
        synchronized (held) {
            holdUntil = 0;
            held.notifyAll();
            for (DatagramPacket h : held) {
                sendUdp(h.getData(), h.getSocketAddress());
            }
            held.clear();
        }
    }

    /**
     * When held replies are released ({@link #holdUntil}), an off-path forger strikes first, from
     * this server's own address and port: to the source port of each held query,
     * {@code randomIds} replies with random IDs, then one with the query's own ID (a forger
     * luckier than any could be). Each has the question as the client wrote it, lower case, and
     * one A record, {@code address}; the lucky ones once {@code randomOnesRead} holds, so that none
     * is dropped by a buffer the random ones filled. Then the genuine replies follow.
     */
    public void forgeWhenReleasing(String address, int randomIds, BooleanSupplier randomOnesRead) {
        forgedAddress = address;
        randomForgeries = randomIds;
        this.randomForgeriesRead = randomOnesRead;
    }

    /** Answers with the question name in lower case, as an upstream that does not keep case. */
    public void lowercaseQuestions(boolean lower) {
        lowercaseQuestions = lower;
    }

    /** Sends UDP answers whole, whatever payload size the query offers, as a broken server would. */
    public void ignoresPayloadSize(boolean ignores) {
        ignoresPayloadSize = ignores;
    }

    /** The question name of every UDP query received, in the case it arrived in. */
    public List<String> receivedNames() {
        return List.copyOf(receivedNames);
    }

    public int udpQueries() {
        return udpQueries.get();
    }

    public int tcpQueries() {
        return tcpQueries.get();
    }

    /** The bytes of the last query received, as they arrived. */
    public byte[] lastQuery() {
        return lastQuery.get();
    }

    /** Where the last UDP query came from. */
    public InetSocketAddress lastSender() {
        return (InetSocketAddress) lastSender.get();
    }

    /** The source port of every UDP query received so far, in arrival order. */
    public List<Integer> senderPorts() {
        return List.copyOf(senderPorts);
    }

    /** Sends {@code reply} from this server's UDP port to whoever sent the last UDP query. */
    public void sendToLastSender(byte[] reply) throws IOException {
        udp.send(new DatagramPacket(reply, reply.length, lastSender.get()));
    }

    private void start(String name, Runnable body) {
        Thread t = new Thread(body, "test-upstream-" + name);
        t.setDaemon(true);
        t.start();
        threads.add(t);
    }

    private void serveUdp() {
        byte[] buf = new byte[65535];
        while (!closed) {
            DatagramPacket p = new DatagramPacket(buf, buf.length);
            try {
                udp.receive(p);
            } catch (IOException e) {
                return;
            }
            byte[] query = Arrays.copyOfRange(p.getData(), p.getOffset(), p.getOffset() + p.getLength());
            lastSender.set(p.getSocketAddress());
            senderPorts.add(p.getPort());
            lastQuery.set(query);
            udpQueries.incrementAndGet();
            try {
                Record question = new Message(query).getQuestion();
                if (question != null) {
                    receivedNames.add(question.getName().toString());
                }
            } catch (IOException e) {
                // not a message dnsjava reads: nothing to record
            }
            if (mode.get() == Mode.SILENT || ignored(query)) {
                continue;
            }
            try {
                if (delayMillis > 0) {
                    // A sleep by design: a slow server, whose answers leave one after another, each this late.
                    Thread.sleep(delayMillis);
                }
                Name no = refused;
                if (no != null && query.length > 12 && no.equals(new Message(query).getQuestion().getName())) {
                    Message r = answer(new Message(query));
                    r.getHeader().setRcode(Rcode.REFUSED);
                    r.removeAllRecords(Section.ANSWER);
                    byte[] out = r.toWire();
                    udp.send(new DatagramPacket(out, out.length, p.getSocketAddress()));
                    continue;
                }
                boolean sent = false;
                synchronized (held) {
                    if (holdUntil > 0) {
                        held.add(new DatagramPacket(query, query.length, p.getSocketAddress()));
                        if (held.size() >= holdUntil) {
                            if (forgedAddress != null) {
                                forge(held);
                            }
                            for (DatagramPacket h : held) {
                                sendUdp(h.getData(), h.getSocketAddress());
                            }
                            held.clear();
                        }
                        sent = true;
                    }
                }
                if (!sent) {
                    sendUdp(query, p.getSocketAddress());
                }
            } catch (IOException e) {
                if (!closed) {
                    throw new RuntimeException(e);
                }
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void forge(List<DatagramPacket> queries) throws IOException, InterruptedException {
        java.util.Random random = new java.util.Random();
        for (DatagramPacket h : queries) {
            Message q = new Message(h.getData());
            for (int i = 0; i < randomForgeries; i++) {
                byte[] forged = forgery(q, random.nextInt(0x10000));
                udp.send(new DatagramPacket(forged, forged.length, h.getSocketAddress()));
            }
        }
        Await.until("the random forgeries read", randomForgeriesRead);
        for (DatagramPacket h : queries) {
            Message q = new Message(h.getData());
            byte[] forged = forgery(q, q.getHeader().getID());
            udp.send(new DatagramPacket(forged, forged.length, h.getSocketAddress()));
        }
    }

    private byte[] forgery(Message q, int id) throws IOException {
        Name lower = q.getQuestion().getName().canonicalize();
        Message r = new Message(id);
        r.getHeader().setFlag(Flags.QR);
        r.getHeader().setFlag(Flags.AA);
        r.getHeader().setFlag(Flags.RD);
        r.addRecord(Record.newRecord(lower, q.getQuestion().getType(), q.getQuestion().getDClass()), Section.QUESTION);
        r.addRecord(new ARecord(lower, DClass.IN, 86400, InetAddress.getByName(forgedAddress)), Section.ANSWER);
        return r.toWire();
    }

    private void sendUdp(byte[] query, SocketAddress to) throws IOException {
        Message q = new Message(query);
        OPTRecord opt = q.getOPT();
        int max = ignoresPayloadSize ? 65_535 : opt == null ? 512 : Math.max(512, opt.getPayloadSize());
        if (mode.get() == Mode.FORGE_FIRST) {
            for (byte[] forged : forgeries(q)) {
                udp.send(new DatagramPacket(forged, forged.length, to));
            }
            byte[] genuine = reply(q).toWire(max);
            forger.send(new DatagramPacket(genuine, genuine.length, to)); // right bytes, wrong source
        }
        Message a = reply(q);
        Record question = a.getQuestion();
        if (lowercaseQuestions && question != null) {
            a.removeAllRecords(Section.QUESTION);
            a.addRecord(Record.newRecord(question.getName().canonicalize(), question.getType(), question.getDClass()),
                    Section.QUESTION);
        }
        byte[] out = a.toWire(max);
        udp.send(new DatagramPacket(out, out.length, to));
    }

    private void acceptTcp() {
        while (!closed) {
            Socket s;
            try {
                s = tcp.accept();
            } catch (IOException e) {
                return;
            }
            connections.add(s);
            start("tcp-conn", () -> serveTcp(s));
        }
    }

    private void serveTcp(Socket s) {
        try (s) {
            DataInputStream in = new DataInputStream(s.getInputStream());
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            while (!closed) {
                int len = in.readUnsignedShort();
                byte[] query = in.readNBytes(len);
                lastQuery.set(query);
                tcpQueries.incrementAndGet();
                if (mode.get() == Mode.SILENT) {
                    continue;
                }
                if (delayMillis > 0) {
                    // A sleep by design: a slow server, each answer on a connection this late after the one before.
                    Thread.sleep(delayMillis);
                }
                synchronized (held) {
                    while (holdUntil == Integer.MAX_VALUE) {
                        held.wait(); // held (hold) until release
                    }
                }
                Message q = new Message(query);
                List<byte[]> replies = new ArrayList<>();
                if (mode.get() == Mode.FORGE_FIRST) {
                    replies.addAll(forgeries(q));
                }
                replies.add(reply(q).toWire());
                synchronized (out) {
                    for (byte[] r : replies) {
                        out.writeShort(r.length);
                        out.write(r);
                    }
                    out.flush();
                }
                if (closeTcpAfterAnswer) {
                    return;
                }
            }
        } catch (IOException e) {
            // connection closed
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A reply with another ID, and one with the right ID but another question. */
    private static List<byte[]> forgeries(Message q) throws IOException {
        Message wrongId = answer(q);
        wrongId.getHeader().setID((q.getHeader().getID() + 1) & 0xFFFF);
        Message wrongQuestion = answer(new Message(q.toWire()));
        Record question = q.getQuestion();
        wrongQuestion.removeAllRecords(Section.QUESTION);
        wrongQuestion.addRecord(Record.newRecord(Name.fromString("forged.example."), question.getType(),
                question.getDClass()), Section.QUESTION);
        return List.of(wrongId.toWire(), wrongQuestion.toWire());
    }

    /**
     * The answer this server gives to {@code q}, before any truncation. A question-less query (a
     * client asking for a server cookie) gets its OPT back, its COOKIE option with 8 more bytes.
     */
    /** The edns-tcp-keepalive TIMEOUT this server answers a query that carries the option with: 120 s. */
    public static final int KEEPALIVE_TIMEOUT = 1200;

    /** The NSID this server gives a query that asks for it. */
    public static final byte[] NSID = "upstream-1".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    public static Message answer(Message q) throws IOException {
        Message r = new Message(q.getHeader().getID());
        r.getHeader().setFlag(Flags.QR);
        r.getHeader().setFlag(Flags.AA);
        if (q.getHeader().getFlag(Flags.RD)) {
            r.getHeader().setFlag(Flags.RD);
        }
        Record question = q.getQuestion();
        if (question == null) {
            List<EDNSOption> options = new ArrayList<>();
            for (EDNSOption o : q.getOPT() == null ? List.<EDNSOption>of() : q.getOPT().getOptions()) {
                if (o instanceof CookieOption c) {
                    options.add(new CookieOption(c.getClientCookie(), new byte[] {1, 2, 3, 4, 5, 6, 7, 8}));
                }
            }
            r.addRecord(new OPTRecord(1232, 0, 0, 0, options), Section.ADDITIONAL);
            return r;
        }
        if (question.getName().getLabelString(0).toLowerCase(java.util.Locale.ROOT).startsWith(UNPARSEABLE)) {
            r.getHeader().unsetFlag(Flags.AA);
            r.getHeader().setRcode(Rcode.FORMERR);
            return r;
        }
        r.addRecord(question, Section.QUESTION);
        if (q.getOPT() != null && q.getOPT().getVersion() != 0) { // RFC 6891 section 6.1.3: BADVERS, in a version-0 OPT
            r.addRecord(new OPTRecord(1232, Rcode.BADVERS >>> 4, 0), Section.ADDITIONAL);
            return r;
        }
        if (q.getOPT() != null && question.getName().subdomain(Name.fromString(BAD_COOKIE))) {
            r.getHeader().setRcode(Rcode.BADCOOKIE & 0xF);
            r.addRecord(new OPTRecord(1232, Rcode.BADCOOKIE >>> 4, 0), Section.ADDITIONAL);
            return r;
        }
        if (q.getOPT() != null) {
            // Asked for its NSID (RFC 5001), it gives it, with an Extended DNS Error about the answer.
            List<EDNSOption> options = new ArrayList<>(q.getOPT().getOptions(EDNSOption.Code.NSID).isEmpty() ? List.of()
                    : List.of(new GenericEDNSOption(EDNSOption.Code.NSID, NSID),
                            new ExtendedErrorCodeOption(ExtendedErrorCodeOption.OTHER, "from the test upstream")));
            if (!q.getOPT().getOptions(EDNSOption.Code.TCP_KEEPALIVE).isEmpty()) {
                options.add(new TcpKeepaliveOption(KEEPALIVE_TIMEOUT)); // RFC 7828: its own idle timeout
            }
            List<EDNSOption> subnet = q.getOPT().getOptions(EDNSOption.Code.CLIENT_SUBNET);
            if (!subnet.isEmpty() && question.getName().subdomain(Name.fromString(OTHER_NETWORK))) {
                options.add(new ClientSubnetOption(24, 24, InetAddress.getByName("198.51.100.0")));
            } else if (!subnet.isEmpty() && question.getName().subdomain(Name.fromString(BY_NETWORK))) {
                ClientSubnetOption asked = (ClientSubnetOption) subnet.get(0);
                options.add(new ClientSubnetOption(asked.getSourcePrefixLength(), asked.getSourcePrefixLength(),
                        asked.getAddress()));
            }
            r.addRecord(new OPTRecord(1232, 0, 0, 0, options), Section.ADDITIONAL);
        }
        Name name = question.getName();
        if (name.equals(Name.fromString(NX))) {
            r.getHeader().setRcode(Rcode.NXDOMAIN);
            return r;
        }
        long ttl = 300;
        switch (question.getType()) {
            case Type.A -> r.addRecord(new ARecord(name, DClass.IN, ttl, InetAddress.getByName("192.0.2.1")),
                    Section.ANSWER);
            case Type.AAAA -> r.addRecord(new AAAARecord(name, DClass.IN, ttl,
                    InetAddress.getByName("2001:db8::1")), Section.ANSWER);
            case Type.MX -> r.addRecord(new MXRecord(name, DClass.IN, ttl, 10,
                    Name.fromString("mail.example.")), Section.ANSWER);
            case Type.TXT -> {
                List<String> strings = new ArrayList<>();
                int count = name.equals(Name.fromString(BIG)) ? 12 : name.equals(Name.fromString(HUGE)) ? 24
                        : name.equals(Name.fromString(GIANT)) ? 160 : name.equals(Name.fromString(MID)) ? 2 : 1;
                for (int i = 0; i < count; i++) {
                    strings.add(count == 1 ? "hello" : "x".repeat(250));
                }
                r.addRecord(new TXTRecord(name, DClass.IN, ttl, strings), Section.ANSWER);
            }
            default -> { }
        }
        return r;
    }

    @Override
    public void close() throws IOException {
        closed = true;
        udp.close();
        forger.close();
        tcp.close();
        for (Socket s : connections) {
            try {
                s.close();
            } catch (SocketException e) {
                // already closed
            }
        }
    }
}
