package io.sluice.config;

import com.google.common.net.HostAndPort;
import com.google.common.net.InetAddresses;
import java.net.IDN;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.Locale;
import org.xbill.DNS.Name;
import org.xbill.DNS.TextParseException;
import org.xbill.DNS.Type;

/** Parsers for the value syntaxes shared by flags and the YAML file. */
public final class Values {
    private Values() {
    }

    /** The name a constant is written with in the configuration: {@code FIXED_WINDOW} is {@code fixed-window}. */
    static String configName(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** The constant whose {@link #configName} is {@code text}. */
    public static <E extends Enum<E>> E named(String text, E[] values) throws ConfigException {
        for (E e : values) {
            if (configName(e).equals(text.trim())) {
                return e;
            }
        }
        StringBuilder known = new StringBuilder();
        for (E e : values) {
            known.append(known.length() == 0 ? "" : ", ").append(configName(e));
        }
        throw new ConfigException("unknown name '" + text + "' (one of " + known + ")");
    }

    static long count(String text, long min, long max) throws ConfigException {
        long n;
        try {
            n = Long.parseLong(text.trim());
        } catch (NumberFormatException e) {
            throw new ConfigException("invalid number '" + text + "'");
        }
        if (n < min || n > max) {
            throw new ConfigException(text.trim() + " is out of range (" + min + " to " + max + ")");
        }
        return n;
    }

    /** A decimal number from {@code min} to {@code max}, such as 0.5. */
    static double fraction(String text, double min, double max) throws ConfigException {
        double d;
        try {
            d = Double.parseDouble(text.trim());
        } catch (NumberFormatException e) {
            throw new ConfigException("invalid number '" + text + "'");
        }
        if (!(d >= min && d <= max)) {
            throw new ConfigException(text.trim() + " is out of range (" + min + " to " + max + ")");
        }
        return d;
    }

    public static int integer(String text, int min, int max) throws ConfigException {
        return (int) count(text, min, max);
    }

    public static boolean bool(String text) throws ConfigException {
        return switch (text.trim().toLowerCase()) {
            case "true", "yes", "on" -> true;
            case "false", "no", "off" -> false;
            default -> throw new ConfigException("invalid boolean '" + text + "' (true or false)");
        };
    }

    /**
     * {@code HOST:PORT}, {@code [IPV6]:PORT}, or a bare host with {@code defaultPort}. A listen
     * address must be an IP literal; an upstream may be a host name, resolved once at start.
     */
    static InetSocketAddress address(String text, int defaultPort, boolean literalOnly) throws ConfigException {
        HostAndPort hp;
        try {
            hp = HostAndPort.fromString(text.trim()).withDefaultPort(defaultPort);
        } catch (IllegalArgumentException e) {
            throw new ConfigException("invalid address '" + text + "' (write it as HOST:PORT or [IPV6]:PORT)");
        }
        String host = hp.getHost();
        int port = hp.getPort();
        if (port < 0 || port > 65535) {
            throw new ConfigException("invalid port in '" + text + "'");
        }
        if (InetAddresses.isInetAddress(host)) {
            return new InetSocketAddress(InetAddresses.forString(host), port);
        }
        if (literalOnly || host.isEmpty()) {
            throw new ConfigException("'" + text + "' is not an IP address with a port");
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(host), port);
        } catch (UnknownHostException e) {
            throw new ConfigException("cannot resolve host '" + host + "'");
        }
    }

    /** A domain name, made absolute: {@code example.com} is {@code example.com.}. */
    static String absoluteName(String text) throws ConfigException {
        try {
            return Name.fromString(text.trim(), Name.root).toString();
        } catch (TextParseException e) {
            throw new ConfigException("'" + text + "' is not a domain name: " + e.getMessage());
        }
    }

    /** A query type by name ({@code NS}, {@code a}, {@code TYPE65280}), as its number; not OPT or a transfer. */
    static int queryType(String text) throws ConfigException {
        int type = Type.value(text.trim().toUpperCase(Locale.ROOT));
        if (type < 0) {
            throw new ConfigException("unknown record type '" + text + "' (A, NS, SOA, ... or TYPEnnn)");
        }
        if (type == Type.OPT || type == Type.AXFR || type == Type.IXFR) {
            throw new ConfigException(Type.string(type) + " is not a type a probe can ask for");
        }
        return type;
    }

    /**
     * A domain name as queries carry it: IDNA A-labels ({@code bücher.de} is
     * {@code xn--bcher-kva.de}), lower case, without a trailing dot.
     */
    public static String asciiDomain(String text) throws ConfigException {
        String t = text.trim();
        if (t.endsWith(".")) {
            t = t.substring(0, t.length() - 1);
        }
        if (t.isEmpty()) {
            throw new ConfigException("an empty domain name");
        }
        try {
            return IDN.toASCII(t, IDN.USE_STD3_ASCII_RULES).toLowerCase(Locale.ROOT);
        } catch (IllegalArgumentException e) {
            throw new ConfigException("'" + text + "' is not a domain name: " + e.getMessage());
        }
    }
}
