package io.sluice.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.cache.AnswerCache;
import io.sluice.config.ConfigException;
import io.sluice.config.Durations;
import io.sluice.config.LimitSettings;
import io.sluice.config.LimitSettings.DomainLimit;
import io.sluice.config.SettingTable;
import io.sluice.config.Values;
import io.sluice.forward.Upstream;
import io.sluice.limit.Budgets;
import io.sluice.top.TopDomains;
import io.sluice.metrics.LatencyHistogram;
import java.net.IDN;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/**
 * What the admin API does, in JSON: reads and changes of a running {@link Sluice}. Runs on the
 * admin thread; each change is logged in one line with the client that asked.
 */
public final class Operations {
    private static final Logger log = LoggerFactory.getLogger(Operations.class);
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final Set<String> LIMIT_FIELDS = Set.of("queries", "window", "unlimited", "ttl", "reason", "burst");
    private static final int MAX_TOP = 1000;

    private final RunningServer server;

    public Operations(RunningServer server) {
        this.server = server;
    }

    /** Null when ready (listening, an upstream up), else why not. */
    String notReady() {
        return server.notReady();
    }

    String metricsText() {
        return server.metricsText();
    }

    JsonNode limits() {
        Budgets.View v = budgets().view();
        ObjectNode out = JSON.objectNode();
        ObjectNode def = limit(JSON.objectNode(), v.defaultLimit());
        def.put("source", "file");
        out.set("default", def);
        ArrayNode list = out.putArray("limits");
        Set<String> runtime = new HashSet<>();
        for (Budgets.Runtime r : v.runtime()) {
            runtime.add(r.domain());
            list.add(runtime(r));
        }
        new TreeMap<>(v.file()).forEach((d, l) -> {
            ObjectNode n = limit(JSON.objectNode().put("domain", d), l);
            n.put("source", "file");
            n.put("in-force", !runtime.contains(d));
            list.add(n);
        });
        return out;
    }

    /** The budget a name's queries get now, and from where. */
    JsonNode limit(String name) {
        String domain = registrableOf(name, false);
        Budgets.View v = budgets().view();
        for (Budgets.Runtime r : v.runtime()) {
            if (r.domain().equals(domain)) {
                return runtime(r);
            }
        }
        DomainLimit file = v.file().get(domain);
        ObjectNode n = limit(JSON.objectNode().put("domain", domain), file != null ? file : v.defaultLimit());
        n.put("source", file != null ? "file" : "default");
        return n;
    }

    JsonNode setLimit(String name, JsonNode body, String client) {
        for (Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!LIMIT_FIELDS.contains(f)) {
                throw new ApiException(400, "unknown field '" + f + "' (queries, window, unlimited, ttl, reason, burst)");
            }
        }
        DomainLimit limit;
        if (body.path("unlimited").asBoolean(false)) {
            if (body.has("queries")) {
                throw new ApiException(400, "give either queries or unlimited, not both");
            }
            limit = DomainLimit.UNLIMITED;
        } else {
            JsonNode q = body.get("queries");
            if (q == null || !q.canConvertToLong() || !q.isIntegralNumber() || q.asLong() < 1
                    || q.asLong() > SettingTable.MAX_QUERIES) {
                throw new ApiException(400, "queries: a whole number from 1 to " + SettingTable.MAX_QUERIES
                        + " is needed (or \"unlimited\": true)");
            }
            Duration window = duration(body, "window", budgets().view().defaultLimit().window());
            if (window.isZero()) {
                throw new ApiException(400, "window: must be longer than 0");
            }
            limit = new DomainLimit(q.asLong(), window);
        }
        Duration ttl = duration(body, "ttl", null);
        if (ttl != null && ttl.isZero()) {
            throw new ApiException(400, "ttl: must be longer than 0 (leave it out for no expiry)");
        }
        JsonNode b = body.get("burst");
        if (b != null && (!b.isIntegralNumber() || !b.canConvertToLong() || b.asLong() < 0
                || b.asLong() > SettingTable.MAX_QUERIES)) {
            throw new ApiException(400, "burst: a whole number from 0 to " + SettingTable.MAX_QUERIES + " is needed");
        }
        LimitSettings.Algorithm algorithm = server.algorithm();
        if (b != null && b.asLong() != 0 && algorithm != LimitSettings.Algorithm.TOKEN_BUCKET) {
            // as limits.burst in the file: a burst the algorithm ignores would be reported as in force
            throw new ApiException(400, "burst: only token-bucket has a burst (the algorithm is " + algorithm + ")");
        }
        String reason = body.hasNonNull("reason") ? body.get("reason").asText() : null;
        String domain = registrableOf(name, true);
        Budgets.Runtime r;
        try {
            r = budgets().set(domain, limit, b == null ? 0 : b.asLong(), ttl, reason, client);
        } catch (IllegalArgumentException e) {
            throw new ApiException(400, e.getMessage());
        }
        log.info("runtime limit of {} set to {}{}{} by {}", r.domain(), limit,
                ttl == null ? "" : " for " + Durations.text(ttl), reason == null ? "" : " (" + reason + ")", client);
        return runtime(r);
    }

    JsonNode removeLimit(String name, String client) {
        String domain = registrableOf(name, false);
        if (!budgets().remove(domain)) {
            throw new ApiException(404, domain + " has no runtime limit (its budget comes from the file or the default)");
        }
        DomainLimit now = budgets().effective(domain);
        log.info("runtime limit of {} removed by {}: back to {}", domain, client, now);
        ObjectNode n = JSON.objectNode().put("domain", domain).put("removed", true);
        n.set("now", limit(JSON.objectNode(), now));
        return n;
    }

    JsonNode top(String n, String by) {
        int count;
        try {
            count = Integer.parseInt(n);
        } catch (NumberFormatException e) {
            throw new ApiException(400, "n: a whole number is needed, not '" + n + "'");
        }
        if (count < 1 || count > MAX_TOP) {
            throw new ApiException(400, "n: between 1 and " + MAX_TOP);
        }
        if (!by.equals("queries") && !by.equals("refused")) {
            throw new ApiException(400, "by: queries or refused, not '" + by + "'");
        }
        ObjectNode out = JSON.objectNode();
        ArrayNode list = out.putArray("domains");
        TopDomains top = server.top();
        if (top == null) {
            return out;
        }
        for (TopDomains.Entry e : top.top(count, by.equals("refused"))) {
            ObjectNode d = list.addObject();
            d.put("domain", e.domain());
            d.put("queries", e.queries());
            d.put("refused", e.refused());
            d.put("inflight_capped", e.inflightCapped());
            DomainLimit l = budgets().effective(e.domain());
            if (l.unlimited()) {
                d.putNull("limit"); // queries per window; none
            } else {
                d.put("limit", l.queries()).put("window", Durations.text(l.window()));
            }
            d.put("limited", e.refused() > 0);
            d.put("flood", server.flooded(e.domain()));
        }
        out.put("seconds", top.seconds());
        return out;
    }

    /** Each upstream: up or not, its replies since start and the sum of their latencies, its smoothed RTT (null before a reply). */
    JsonNode upstreams() {
        ObjectNode out = JSON.objectNode();
        ArrayNode list = out.putArray("upstreams");
        List<Upstream> all = server.upstreams();
        for (int i = 0; i < all.size(); i++) {
            Upstream u = all.get(i);
            LatencyHistogram latency = server.upstreamLatency(i);
            // The sum, as a Prometheus histogram's: two readings give the mean between them (the dashboard's).
            ObjectNode o = list.addObject().put("address", u.toString()).put("up", !u.isDown())
                    .put("replies", latency.count()).put("latency-seconds", latency.sumSeconds());
            long rtt = u.rttNanos();
            if (rtt >= 0) {
                o.put("rtt-seconds", rtt / 1e9); // the smoothed round-trip time (retransmit's estimator)
            } else {
                o.putNull("rtt-seconds");
            }
        }
        return out;
    }

    /** Every counter's total, for the dashboard's rates. */
    JsonNode stats() {
        ObjectNode out = JSON.objectNode();
        out.put("time", Instant.now().toEpochMilli());
        ObjectNode counters = out.putObject("counters");
        server.counters().forEach(counters::put);
        out.put("tracked-domains", server.trackedDomains());
        return out;
    }

    JsonNode reload(String client) {
        List<String> changes;
        try {
            changes = server.reload();
        } catch (ConfigException e) {
            log.warn("reload asked by {} failed, nothing changed: {}", client, e.getMessage());
            throw new ApiException(400, e.getMessage());
        }
        log.info("reload asked by {}: {}", client, changes.isEmpty() ? "nothing changed" : String.join("; ", changes));
        ObjectNode out = JSON.objectNode().put("reloaded", true);
        ArrayNode list = out.putArray("changes");
        changes.forEach(list::add);
        return out;
    }

    /** The answers the cache keeps for exactly {@code name}, stale ones included. */
    JsonNode cache(String name) {
        AnswerCache cache = server.cache();
        if (cache == null) {
            throw new ApiException(409, "the cache is off (cache.size: 0)");
        }
        String ascii = cacheName(name);
        List<AnswerCache.Kept> kept;
        try {
            kept = cache.show(ascii);
        } catch (IllegalArgumentException e) {
            throw new ApiException(400, "'" + name + "' is not a domain name: " + e.getMessage());
        }
        ObjectNode out = JSON.objectNode().put("name", ascii);
        ArrayNode list = out.putArray("answers");
        for (AnswerCache.Kept k : kept) {
            ObjectNode a = list.addObject().put("type", Type.string(k.type())).put("class", DClass.string(k.dclass()));
            k.flags().forEach(a.putArray("flags")::add);
            a.put("transport", k.udpSize() == 0 ? "tcp" : "udp");
            if (k.udpSize() != 0) {
                a.put("udp-size", k.udpSize());
            }
            a.put("rcode", Rcode.string(k.rcode())).put("records", k.records()).put("ttl", k.ttlSeconds())
                    .put("stale", k.stale());
        }
        return out;
    }

    /** A name as the cache's admin paths take it: A-labels, lower case; {@code .} the root. */
    private static String cacheName(String name) {
        try {
            return name.equals(".") ? "." : IDN.toASCII(name, IDN.ALLOW_UNASSIGNED).toLowerCase(Locale.ROOT);
        } catch (IllegalArgumentException e) {
            throw new ApiException(400, "'" + name + "' is not a domain name: " + e.getMessage());
        }
    }

    /**
     * Removes cached answers: every one when {@code name} is null, else those to {@code name} (of
     * {@code type} only when given; with {@code subtree}, of every name under it too).
     */
    JsonNode flushCache(String name, String type, String subtree, String client) {
        AnswerCache cache = server.cache();
        if (cache == null) {
            throw new ApiException(409, "the cache is off (cache.size: 0)");
        }
        if (name == null) {
            if (type != null || subtree != null) {
                throw new ApiException(400, "type and subtree go with a name: DELETE /api/v1/cache/NAME");
            }
            long removed = cache.flushAll();
            log.info("cache flushed by {}: {} answers removed", client, removed);
            return JSON.objectNode().put("removed", removed);
        }
        boolean under = switch (subtree == null ? "false" : subtree) {
            case "true", "" -> true;
            case "false" -> false;
            default -> throw new ApiException(400, "subtree: true or false, not '" + subtree + "'");
        };
        int typeNumber = -1;
        if (type != null) {
            typeNumber = Type.value(type, true);
            if (typeNumber < 0) {
                throw new ApiException(400, "type: a record type such as A, AAAA or TYPE65 is needed, not '" + type + "'");
            }
        }
        String ascii = cacheName(name);
        long removed;
        try {
            removed = cache.flush(ascii, typeNumber, under);
        } catch (IllegalArgumentException e) {
            throw new ApiException(400, "'" + name + "' is not a domain name: " + e.getMessage());
        }
        String what = (typeNumber < 0 ? "" : Type.string(typeNumber) + " ") + (under ? "under " : "of ") + ascii;
        log.info("cache answers {} flushed by {}: {} removed", what, client, removed);
        ObjectNode out = JSON.objectNode().put("name", ascii);
        if (typeNumber < 0) {
            out.putNull("type");
        } else {
            out.put("type", Type.string(typeNumber));
        }
        return out.put("subtree", under).put("removed", removed);
    }

    private Budgets budgets() {
        Budgets b = server.budgets();
        if (b == null) {
            throw new ApiException(409, "limits cannot change while running here");
        }
        return b;
    }

    /** {@code name} in A-labels; with {@code strict}, a name that is not registrable is an error naming its domain. */
    private String registrableOf(String name, boolean strict) {
        String ascii;
        try {
            ascii = Values.asciiDomain(name);
        } catch (ConfigException e) {
            throw new ApiException(400, e.getMessage());
        }
        try {
            return strict ? Budgets.registrable(server.domains(), ascii) : server.domains().reduce(ascii);
        } catch (IllegalArgumentException e) {
            throw new ApiException(400, ascii + ": " + e.getMessage());
        }
    }

    private static Duration duration(JsonNode body, String field, Duration absent) {
        JsonNode n = body.get(field);
        if (n == null || n.isNull()) {
            return absent;
        }
        if (!n.isTextual()) {
            throw new ApiException(400, field + ": a duration such as \"1s\" or \"10m\" is needed");
        }
        try {
            return Durations.parse(n.asText());
        } catch (ConfigException e) {
            throw new ApiException(400, field + ": " + e.getMessage());
        }
    }

    private static ObjectNode limit(ObjectNode n, DomainLimit l) {
        if (l.unlimited()) {
            n.put("unlimited", true);
        } else {
            n.put("queries", l.queries()).put("window", Durations.text(l.window()));
        }
        return n;
    }

    private static ObjectNode runtime(Budgets.Runtime r) {
        ObjectNode n = limit(JSON.objectNode().put("domain", r.domain()), r.limit());
        n.put("source", "api");
        n.put("in-force", true);
        if (r.burst() > 0) {
            n.put("burst", r.burst());
        }
        n.put("reason", r.reason());
        n.put("expires", r.expiresEpochNanos() == Budgets.Runtime.NEVER ? null
                : Instant.ofEpochSecond(0, r.expiresEpochNanos()).truncatedTo(ChronoUnit.SECONDS).toString());
        n.put("set-by", r.setBy());
        return n;
    }
}
