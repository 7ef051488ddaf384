package io.sluice.cache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sluice.limit.Clock;
import io.sluice.testing.Dns;
import io.sluice.testing.NsdServer;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.UnboundServer;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.xbill.DNS.ClientSubnetOption;
import org.xbill.DNS.CookieOption;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * The answer cache changes no answer: sluice, the cache on, in front of a real nsd and a real
 * unbound serving the same signed zone, gives each query the answer the upstream gives the same
 * bytes over the same transport, cold and warm, UDP asked before TCP and TCP before UDP. Every
 * kind of record and answer (referral, NXDOMAIN, NODATA, wildcard, CNAME chain, DNAMEs, 2 KB and
 * larger RRsets, TC), EDNS or not at several sizes, DO, CD, RD off, a COOKIE, Client Subnet, and
 * the name in mixed case.
 *
 * <p>Compared: the whole header (flags, RCODE, counts), the question byte for byte, every record
 * of every section with its owner's and data's letter case, and the OPT but for the options that
 * are one client's (COOKIE, PADDING: a cached answer carries neither). Forgiven: TTLs that aged
 * by up to a few seconds in the cache, and the order of records within a section (unbound
 * rotates RRsets). Over UDP a client offering more than {@code max-udp-size} (1232) is asked
 * upstream as offering 1232, so its answer is compared with the upstream's to that size.
 */
class CacheDifferentialTest {
    private static final int MAX_UDP_SIZE = 1232;
    private static final int OPTION_COOKIE = 10;
    private static final int OPTION_PADDING = 12;

    @TempDir
    static Path dir;
    private static NsdServer nsd;
    private static UnboundServer unbound;
    /** Per upstream, two sluices: one asked UDP first, one TCP first, so each cache fills its own way. */
    private static final List<Route> routes = new ArrayList<>();

    private record Route(String name, InetSocketAddress upstream, RunningSluice sluice, boolean udpFirst) {
    }

    @BeforeAll
    static void start() throws Exception {
        nsd = NsdServer.start(Files.createDirectory(dir.resolve("nsd")));
        unbound = UnboundServer.start(Files.createDirectory(dir.resolve("unbound")));
        for (boolean udpFirst : new boolean[] {true, false}) {
            routes.add(new Route("nsd", nsd.address(), cached(nsd.hostPort()), udpFirst));
            routes.add(new Route("unbound", unbound.address(), cached(unbound.hostPort()), udpFirst));
        }
    }

    private static RunningSluice cached(String upstream) throws Exception {
        return RunningSluice.startFor(List.of(upstream), Clock.system(), b -> { }, "cache.size", "10000");
    }

    @AfterAll
    static void stop() throws Exception {
        for (Route r : routes) {
            r.sluice().close();
        }
        if (nsd != null) {
            nsd.close();
        }
        if (unbound != null) {
            unbound.close();
        }
    }

    /** How a query is asked: its EDNS, options and flags. */
    enum Way {
        NO_EDNS(-1, false), EDNS_512(512, false), EDNS_1232(1232, false), EDNS_4096(4096, false),
        DO_1232(1232, true), DO_4096(4096, true), DO_CD(1232, true), NO_RD(1232, false), COOKIE(1232, false),
        CLIENT_SUBNET(1232, false), EDNS_1400_DO(1400, true);

        final int payload;
        final boolean dnssecOk;

        Way(int payload, boolean dnssecOk) {
            this.payload = payload;
            this.dnssecOk = dnssecOk;
        }

        /** The query with {@code payload} as its OPT's size (when it has an OPT). */
        byte[] query(int id, String name, int type, int payload) throws Exception {
            Message m = Dns.message(id, name, type);
            if (this == NO_RD) {
                m.getHeader().unsetFlag(Flags.RD);
            }
            if (this == DO_CD) {
                m.getHeader().setFlag(Flags.CD);
            }
            if (this.payload > 0) {
                List<EDNSOption> options = new ArrayList<>();
                if (this == COOKIE) {
                    options.add(new CookieOption(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}));
                }
                if (this == CLIENT_SUBNET) {
                    options.add(new ClientSubnetOption(24, java.net.InetAddress.getByName("192.0.2.0")));
                }
                m.addRecord(new OPTRecord(payload, 0, 0, dnssecOk ? Flags.DO : 0, options), Section.ADDITIONAL);
            }
            return m.toWire();
        }
    }

    static Stream<Arguments> cases() {
        String[][] questions = {
            {"diff.test.", "SOA"}, {"diff.test.", "NS"}, {"diff.test.", "A"}, {"diff.test.", "AAAA"},
            {"diff.test.", "MX"}, {"diff.test.", "TXT"}, {"diff.test.", "CAA"}, {"diff.test.", "NAPTR"},
            {"diff.test.", "DNSKEY"}, {"diff.test.", "NSEC"}, {"diff.test.", "RRSIG"}, {"diff.test.", "ANY"},
            {"www.diff.test.", "A"}, {"www.diff.test.", "MX"}, {"c1.diff.test.", "A"}, {"c3.diff.test.", "CNAME"},
            {"foo.wild.diff.test.", "A"}, {"a.b.wild.diff.test.", "TXT"}, {"www.dn.diff.test.", "A"},
            {"www.dn2.diff.test.", "A"}, {"x.y.dn2.diff.test.", "AAAA"}, {"dn.diff.test.", "DNAME"},
            {"host.sub.diff.test.", "A"}, {"sub.diff.test.", "NS"}, {"unk.diff.test.", "TYPE65280"},
            {"big.diff.test.", "TXT"}, {"hinfo.diff.test.", "HINFO"}, {"ssh.diff.test.", "SSHFP"},
            {"_443._tcp.www.diff.test.", "TLSA"}, {"_sip._tcp.diff.test.", "SRV"}, {"nope.diff.test.", "A"},
            {"h150.diff.test.", "TXT"}, {"many.diff.test.", "A"}, {"many.diff.test.", "AAAA"},
            {"neg.diff.test.", "A"}, {"mail.diff.test.", "AAAA"},
        };
        List<Arguments> out = new ArrayList<>();
        int n = 0;
        for (String[] q : questions) {
            for (Way way : Way.values()) {
                String name = n++ % 2 == 0 ? q[0] : mixedCase(q[0], n);
                out.add(Arguments.of(name, q[1], way));
            }
        }
        return out.stream();
    }

    /** {@code name} with every other letter, from a point that moves with {@code seed}, upper case. */
    private static String mixedCase(String name, int seed) {
        char[] c = name.toCharArray();
        for (int i = seed % 3; i < c.length; i += 2) {
            c[i] = Character.toUpperCase(c[i]);
        }
        return new String(c);
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("cases")
    void everyAnswerIsTheUpstreamsColdAndWarm(String name, String type, Way way) throws Exception {
        int t = Type.value(type);
        byte[] query = way.query(0x5A5A, name, t, way.payload);
        byte[] askedOverUdp = way.query(0x5A5A, name, t, Math.min(way.payload, MAX_UDP_SIZE));
        for (Route r : routes) {
            byte[] directUdp = Dns.udp(r.upstream(), askedOverUdp);
            byte[] directTcp = Dns.tcp(r.upstream(), query);
            assertNotNull(directUdp, r.name() + " answers over UDP");
            for (int pass = 0; pass < 2; pass++) {
                boolean udp = r.udpFirst() == (pass == 0);
                for (String when : new String[] {"cold", "warm"}) {
                    byte[] relayed = udp ? Dns.udp(r.sluice().address(), query) : Dns.tcp(r.sluice().address(), query);
                    String what = r.name() + (r.udpFirst() ? ", UDP first" : ", TCP first") + ": " + (udp ? "UDP" : "TCP")
                            + " " + when;
                    assertSameAnswer(udp ? directUdp : directTcp, relayed, what);
                }
            }
        }
    }

    private static void assertSameAnswer(byte[] direct, byte[] relayed, String what) throws Exception {
        assertNotNull(relayed, what + ": no answer");
        assertArrayEquals(Arrays.copyOf(direct, 4), Arrays.copyOf(relayed, 4), what + ": ID and flags");
        int questionEnd = questionEnd(direct);
        assertArrayEquals(Arrays.copyOfRange(direct, 12, questionEnd), Arrays.copyOfRange(relayed, 12, questionEnd(relayed)),
                what + ": the question, byte for byte");
        Message d = Dns.parse(direct);
        Message s = Dns.parse(relayed);
        for (int section : new int[] {Section.ANSWER, Section.AUTHORITY, Section.ADDITIONAL}) {
            TreeMap<String, Long> want = records(d, section);
            TreeMap<String, Long> got = records(s, section);
            assertEquals(want.keySet().stream().toList(), got.keySet().stream().toList(),
                    what + ": " + Section.string(section) + " section");
            for (var e : want.entrySet()) {
                long aged = e.getValue() - got.get(e.getKey());
                assertTrue(aged >= 0 && aged <= 3, what + ": TTL of " + e.getKey() + " " + got.get(e.getKey())
                        + " against " + e.getValue());
            }
        }
        OPTRecord a = d.getOPT();
        OPTRecord b = s.getOPT();
        assertEquals(a == null, b == null, what + ": an OPT or none");
        if (a != null) {
            assertEquals(a.getPayloadSize(), b.getPayloadSize(), what + ": OPT payload size");
            assertEquals(a.getExtendedRcode(), b.getExtendedRcode(), what + ": extended RCODE");
            assertEquals(a.getVersion(), b.getVersion(), what + ": EDNS version");
            assertEquals(a.getFlags(), b.getFlags(), what + ": EDNS flags");
            assertEquals(options(a), options(b), what + ": EDNS options");
        }
    }

    /** The section's records but the OPT, each as owner, type, class and data in their letter case, to its TTL. */
    private static TreeMap<String, Long> records(Message m, int section) {
        TreeMap<String, Long> out = new TreeMap<>();
        for (Record r : m.getSection(section)) {
            if (r.getType() == Type.OPT) {
                continue;
            }
            String key = r.getName() + " " + Type.string(r.getType()) + " " + r.getDClass() + " " + r.rdataToString();
            if (out.put(key, r.getTTL()) != null) {
                fail("the same record twice: " + key);
            }
        }
        return out;
    }

    private static List<String> options(OPTRecord opt) {
        return opt.getOptions().stream().filter(o -> o.getCode() != OPTION_COOKIE && o.getCode() != OPTION_PADDING)
                .map(o -> o.getCode() + ":" + o).toList();
    }

    private static int questionEnd(byte[] m) {
        int pos = 12;
        while (m[pos] != 0) {
            pos += (m[pos] & 0xFF) + 1;
        }
        return pos + 5;
    }
}
