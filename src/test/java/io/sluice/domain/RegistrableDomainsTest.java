package io.sluice.domain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.common.net.InternetDomainName;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RegistrableDomainsTest {
    private static final RegistrableDomains PSL = RegistrableDomains.fromGuava();

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        // the table of the issue
        "www.a.example.co.uk, example.co.uk",
        "x.example.co.uk, example.co.uk",
        "a.b.github.io, b.github.io",
        "WWW.Example.COM., example.com",
        "a.b.corp.internal, corp.internal",
        "_dmarc.example.com, example.com",
        "_443._tcp.mail.example.com, example.com",
        "co.uk, co.uk",
        "com, com",
        "'.', '.'",
        // plain and multi-level ICANN suffixes
        "example.com, example.com",
        "a.b.c.d.e.example.com, example.com",
        "example.uk, example.uk",
        "www.example.ac.uk, example.ac.uk",
        "city.example.gov.uk, example.gov.uk",
        "foo.bar.com.au, bar.com.au",
        "foo.bar.co.jp, bar.co.jp",
        "x.y.tokyo.jp, y.tokyo.jp",
        "a.b.c.de, c.de",
        "mail.example.com.br, example.com.br",
        "www.example.org.il, example.org.il",
        "shop.example.com.cn, example.com.cn",
        "a.example.k12.ca.us, example.k12.ca.us",
        "www.test.ny.us, test.ny.us",
        // wildcards and their exceptions
        "b.ck, b.ck",
        "a.b.ck, a.b.ck",
        "x.a.b.ck, a.b.ck",
        "www.ck, www.ck",
        "a.www.ck, www.ck",
        "kawasaki.jp, kawasaki.jp",
        "x.kawasaki.jp, x.kawasaki.jp",
        "y.x.kawasaki.jp, y.x.kawasaki.jp",
        "city.kawasaki.jp, city.kawasaki.jp",
        "www.city.kawasaki.jp, city.kawasaki.jp",
        "a.b.c.kobe.jp, b.c.kobe.jp",
        "city.kobe.jp, city.kobe.jp",
        "x.city.kobe.jp, city.kobe.jp",
        "a.b.er, a.b.er",
        "b.er, b.er",
        // the private section
        "foo.blogspot.com, foo.blogspot.com",
        "a.foo.blogspot.com, foo.blogspot.com",
        "blogspot.com, blogspot.com",
        "github.io, github.io",
        "x.y.z.github.io, z.github.io",
        "bucket.s3.amazonaws.com, bucket.s3.amazonaws.com",
        "x.bucket.s3.amazonaws.com, bucket.s3.amazonaws.com",
        "amazonaws.com, amazonaws.com",
        "foo.amazonaws.com, amazonaws.com",
        "a.herokuapp.com, a.herokuapp.com",
        "x.a.herokuapp.com, a.herokuapp.com",
        "a.b.appspot.com, b.appspot.com",
        // unknown top-level domains: the default rule
        "a.b.c.nosuchtld, c.nosuchtld",
        "nosuchtld, nosuchtld",
        "localhost, localhost",
        "foo.localhost, foo.localhost",
        "a.x.home.arpa, x.home.arpa",
        "1.0.0.127.in-addr.arpa, 0.0.127.in-addr.arpa", // per /24, see reverseNamesCountPerNetwork
        // case, IDN in its ASCII form, odd octets
        "WWW.EXAMPLE.CO.UK, example.co.uk",
        "ExAmPlE.GiThUb.Io, example.github.io",
        "www.xn--fiqs8s, www.xn--fiqs8s",
        "a.www.xn--fiqs8s, www.xn--fiqs8s",
        "a.xn--55qx5d.cn, a.xn--55qx5d.cn",
        "x.a.xn--55qx5d.cn, a.xn--55qx5d.cn",
        "'a\\.b.example.com', example.com",
        "'\\000\\255.example.com', example.com",
        "'*.example.com', example.com",
        "'-.-.example.net', example.net",
    })
    void reducesToTheRegistrableDomain(String name, String expected) {
        assertEquals(expected, PSL.reduce(name));
    }

    @Test
    void readsTheWireNameInPlaceWithoutCompressionOrCase() {
        ByteBuf buf = Unpooled.wrappedBuffer(new byte[] {9, 9, 3, 'W', 'w', 'W', 7, 'E', 'x', 'a', 'm', 'p', 'l', 'e',
            2, 'C', 'o', 2, 'u', 'K', 0, 7, 7});
        DomainProbe probe = new DomainProbe();
        PSL.reduce(buf, 2, 21, probe);
        assertEquals("example.co.uk", probe.toString());
        assertEquals(DomainKey.of("Example.co.UK."), probe.toKey());
        assertTrue(probe.equals(DomainKey.of("example.co.uk")));
        assertEquals(DomainKey.of("example.co.uk").hashCode(), probe.hashCode());
    }

    /** Reverse names count per /24 and per /48 by default, not per first octet as the list has it. */
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        "4.3.2.192.in-addr.arpa, 3.2.192.in-addr.arpa",
        "99.3.2.192.IN-ADDR.ARPA, 3.2.192.in-addr.arpa",
        "2.192.in-addr.arpa, 2.192.in-addr.arpa",
        "in-addr.arpa, in-addr.arpa",
        "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa, 0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa",
        "x.not-in-addr.arpa, not-in-addr.arpa",
    })
    void reverseNamesCountPerNetwork(String name, String expected) {
        assertEquals(expected, PSL.reduce(name));
    }

    @Test
    void reversePrefixesCanBeOtherNetworks() {
        RegistrableDomains by16 = PSL.withReversePrefixes(16, 32);
        assertEquals("2.192.in-addr.arpa", by16.reduce("4.3.2.192.in-addr.arpa"));
        assertEquals("8.b.d.0.1.0.0.2.ip6.arpa",
                by16.reduce("1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa"));
    }

    /** Every rule of Guava's list, reduced by sluice and by Guava's InternetDomainName, agrees. */
    @Test
    void agreesWithGuavaOnEveryRuleOfItsList() {
        List<String> rules = GuavaSuffixList.rules();
        assertTrue(rules.size() > 5000, "decoded " + rules.size() + " rules");
        List<String> disagreements = new ArrayList<>();
        int compared = 0;
        for (String rule : rules) {
            String base = rule.replace("!", "").replace("*.", "");
            if (!base.chars().allMatch(c -> c < 0x80)) {
                continue; // IDN rules: Guava works on Unicode, the wire on xn-- labels
            }
            if (base.endsWith("in-addr.arpa") || base.endsWith("ip6.arpa")) {
                continue; // reverse names count per network on purpose (reverseNamesCountPerNetwork)
            }
            String name = (rule.startsWith("*.") ? "q.w.e." : "q.w.") + base;
            InternetDomainName guava = InternetDomainName.from(name);
            if (!guava.isUnderPublicSuffix()) {
                continue;
            }
            compared++;
            String expected = guava.topPrivateDomain().toString();
            String actual = PSL.reduce(name);
            if (!expected.equals(actual)) {
                disagreements.add(name + ": guava " + expected + ", sluice " + actual);
            }
        }
        assertTrue(compared > 5000, "compared " + compared);
        assertEquals(List.of(), disagreements);
    }

    @Test
    void aListFileReplacesTheBuiltInOne(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("list.dat");
        Files.writeString(f, "// a comment\n\n// ===BEGIN ICANN DOMAINS===\ncom\n*.example.com trailing words\n"
                + "!www.example.com\nnewtld\n");
        RegistrableDomains psl = RegistrableDomains.fromFile(f);
        assertEquals("a.b.example.com", psl.reduce("x.a.b.example.com"));
        assertEquals("www.example.com", psl.reduce("x.www.example.com"));
        assertEquals("co.uk", psl.reduce("x.co.uk"), "co.uk is not in this list: the default rule");
        assertEquals("x.newtld", psl.reduce("a.x.newtld"));
    }
}
