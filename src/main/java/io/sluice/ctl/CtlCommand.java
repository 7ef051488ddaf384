package io.sluice.ctl;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code sluice ctl}: the admin API from a terminal, as amqpprox_ctl and unbound-control are.
 * Exit 0 when done, 1 when the server says no or cannot be reached, 2 for bad arguments; errors
 * on one line of standard error.
 */
@Command(name = "ctl", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Talk to a running sluice through its admin API (--admin).",
        subcommands = {CtlCommand.Limit.class, CtlCommand.Top.class, CtlCommand.Stats.class, CtlCommand.Reload.class,
            CtlCommand.Cache.class, CtlCommand.Health.class})
public final class CtlCommand implements Callable<Integer> {
    static final int EXIT_OK = 0;
    static final int EXIT_REFUSED = 1;
    static final int EXIT_USAGE = 2;
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    @Option(names = "--admin", paramLabel = "HOST:PORT", description = "The admin listener. Default: 127.0.0.1:8053.")
    String admin = "127.0.0.1:8053";

    @Option(names = "--token-file", paramLabel = "FILE", description = "A file holding the admin API's bearer token.")
    Path tokenFile;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(),
                "a command is needed: limit set|rm|ls, top, stats, reload, cache show|flush or health");
    }

    private AdminClient client() throws AdminClient.Refused {
        String token = null;
        if (tokenFile != null) {
            try {
                token = Files.readString(tokenFile).strip();
            } catch (IOException e) {
                throw new AdminClient.Refused("cannot read the token file " + tokenFile + ": " + e.getMessage());
            }
        }
        return new AdminClient(adminAddress(), token);
    }

    /** {@link #admin} as HOST:PORT: a bare port or {@code :PORT} is on 127.0.0.1, as the server's admin.listen takes it. */
    private String adminAddress() {
        String a = admin.matches("[0-9]+") ? "127.0.0.1:" + admin : admin.startsWith(":") ? "127.0.0.1" + admin : admin;
        URI uri;
        try {
            uri = new URI("http://" + a);
        } catch (URISyntaxException e) {
            uri = null;
        }
        if (uri == null || uri.getHost() == null || uri.getPort() < 1 || uri.getPort() > 65535
                || !("http://" + a).equals(uri.toString())) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--admin: HOST:PORT, :PORT or PORT is needed, not '" + admin + "'");
        }
        return a;
    }

    /** Runs {@code body} against the server: its exit code, with a refusal printed on one line. */
    private int run(CommandLine cli, Action body) {
        PrintWriter out = cli.getOut();
        try {
            body.run(client(), out);
            out.flush();
            return EXIT_OK;
        } catch (AdminClient.Refused e) {
            cli.getErr().println("sluice ctl: " + e.getMessage());
            cli.getErr().flush();
            return EXIT_REFUSED;
        }
    }

    @FunctionalInterface
    private interface Action {
        void run(AdminClient client, PrintWriter out) throws AdminClient.Refused;
    }

    @Command(name = "limit", mixinStandardHelpOptions = true, description = "Runtime limits: set, rm, ls.",
            subcommands = {Limit.Set.class, Limit.Rm.class, Limit.Ls.class})
    static final class Limit implements Callable<Integer> {
        @ParentCommand
        CtlCommand ctl;
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            throw new CommandLine.ParameterException(spec.commandLine(), "limit needs set, rm or ls");
        }

        @Command(name = "set", mixinStandardHelpOptions = true,
                description = "Give DOMAIN a budget of N queries per WINDOW (or 'unlimited') until removed or --ttl.")
        static final class Set implements Callable<Integer> {
            @ParentCommand
            Limit limit;
            @Spec
            CommandLine.Model.CommandSpec spec;
            @Parameters(index = "0", paramLabel = "DOMAIN")
            String domain;
            @Parameters(index = "1", paramLabel = "N/WINDOW", description = "e.g. 100/1s, 5000/1m, or unlimited")
            String budget;
            @Option(names = "--ttl", paramLabel = "DURATION", description = "How long it holds, e.g. 10m.")
            String ttl;
            @Option(names = "--reason", paramLabel = "TEXT", description = "Why, for the list and the log.")
            String reason;

            @Override
            public Integer call() {
                ObjectNode body = JSON.objectNode();
                if (budget.equals("unlimited")) {
                    body.put("unlimited", true);
                } else {
                    String[] parts = budget.split("/", 2);
                    long n;
                    try {
                        n = Long.parseLong(parts[0]);
                    } catch (NumberFormatException e) {
                        throw new CommandLine.ParameterException(spec.commandLine(),
                                "N/WINDOW: '" + budget + "' is not a number of queries per window (e.g. 100/1s)");
                    }
                    body.put("queries", n);
                    if (parts.length == 2) {
                        body.put("window", parts[1]);
                    }
                }
                if (ttl != null) {
                    body.put("ttl", ttl);
                }
                if (reason != null) {
                    body.put("reason", reason);
                }
                return limit.ctl.run(spec.commandLine(), (c, out) -> {
                    JsonNode r = c.call("PUT", "/api/v1/limits/" + AdminClient.encode(domain), body);
                    out.println(r.get("domain").asText() + ": " + budgetText(r)
                            + (r.path("expires").isNull() ? "" : " until " + r.get("expires").asText()));
                });
            }
        }

        @Command(name = "rm", mixinStandardHelpOptions = true,
                description = "Remove DOMAIN's runtime limit: back to the file's budget or the default.")
        static final class Rm implements Callable<Integer> {
            @ParentCommand
            Limit limit;
            @Spec
            CommandLine.Model.CommandSpec spec;
            @Parameters(index = "0", paramLabel = "DOMAIN")
            String domain;

            @Override
            public Integer call() {
                return limit.ctl.run(spec.commandLine(), (c, out) -> {
                    JsonNode r = c.call("DELETE", "/api/v1/limits/" + AdminClient.encode(domain), null);
                    out.println(r.get("domain").asText() + ": runtime limit removed, now " + budgetText(r.get("now")));
                });
            }
        }

        @Command(name = "ls", mixinStandardHelpOptions = true, description = "List the default and every override.")
        static final class Ls implements Callable<Integer> {
            @ParentCommand
            Limit limit;
            @Spec
            CommandLine.Model.CommandSpec spec;

            @Override
            public Integer call() {
                return limit.ctl.run(spec.commandLine(), (c, out) -> {
                    JsonNode r = c.call("GET", "/api/v1/limits", null);
                    List<String[]> rows = new ArrayList<>();
                    rows.add(new String[] {"DOMAIN", "LIMIT", "SOURCE", "EXPIRES", "REASON"});
                    rows.add(new String[] {"(default)", budgetText(r.get("default")), "file", "", ""});
                    for (JsonNode l : r.get("limits")) {
                        String source = l.get("source").asText() + (l.path("in-force").asBoolean(true) ? "" : " (overridden)");
                        rows.add(new String[] {l.get("domain").asText(), budgetText(l), source,
                            l.path("expires").isMissingNode() || l.path("expires").isNull() ? "" : l.get("expires").asText(),
                            l.path("reason").isMissingNode() || l.path("reason").isNull() ? "" : l.get("reason").asText()});
                    }
                    table(out, rows);
                });
            }
        }
    }

    @Command(name = "top", mixinStandardHelpOptions = true,
            description = "The busiest domains of about the last ten seconds.")
    static final class Top implements Callable<Integer> {
        @ParentCommand
        CtlCommand ctl;
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Option(names = "-n", paramLabel = "N", description = "How many. Default: 20.")
        int n = 20;
        @Option(names = "--by", paramLabel = "queries|refused", description = "Rank by. Default: queries.")
        String by = "queries";

        @Override
        public Integer call() {
            if (!by.equals("queries") && !by.equals("refused")) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--by: queries or refused, not '" + by + "'");
            }
            if (n < 1) {
                throw new CommandLine.ParameterException(spec.commandLine(), "-n: at least 1");
            }
            return ctl.run(spec.commandLine(), (c, out) -> {
                JsonNode r = c.call("GET", "/api/v1/top?n=" + n + "&by=" + by, null);
                List<String[]> rows = new ArrayList<>();
                rows.add(new String[] {"DOMAIN", "QUERIES", "REFUSED", "LIMIT", "LIMITED"});
                for (JsonNode d : r.get("domains")) {
                    rows.add(new String[] {d.get("domain").asText(), d.get("queries").asText(), d.get("refused").asText(),
                        d.get("limit").isNull() ? "unlimited" : d.get("limit").asText() + " per " + d.get("window").asText(),
                        d.path("flood").asBoolean(false) ? "flood" : d.get("limited").asBoolean() ? "yes" : "no"});
                }
                table(out, rows);
            });
        }
    }

    @Command(name = "stats", mixinStandardHelpOptions = true,
            description = "Every counter since start, one name=value a line (as unbound-control stats), then tracked-domains.")
    static final class Stats implements Callable<Integer> {
        @ParentCommand
        CtlCommand ctl;
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Parameters(paramLabel = "PREFIX", arity = "0..*", description = "Only the counters whose names start so, e.g. cache_.")
        List<String> prefixes = List.of();

        @Override
        public Integer call() {
            return ctl.run(spec.commandLine(), (c, out) -> {
                JsonNode r = c.call("GET", "/api/v1/stats", null);
                List<String> names = new ArrayList<>();
                r.get("counters").fieldNames().forEachRemaining(names::add);
                names.sort(null);
                names.add("tracked-domains"); // not a counter: last, as docs/operations.md says
                for (String name : names) {
                    if (prefixes.isEmpty() || prefixes.stream().anyMatch(name::startsWith)) {
                        JsonNode v = name.equals("tracked-domains") ? r.get(name) : r.get("counters").get(name);
                        out.println(name + "=" + v.asText());
                    }
                }
            });
        }
    }

    @Command(name = "reload", mixinStandardHelpOptions = true, description = "Re-read the configuration file.")
    static final class Reload implements Callable<Integer> {
        @ParentCommand
        CtlCommand ctl;
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            return ctl.run(spec.commandLine(), (c, out) -> {
                JsonNode r = c.call("POST", "/api/v1/reload", null);
                if (r.get("changes").isEmpty()) {
                    out.println("reloaded: nothing changed");
                }
                for (JsonNode change : r.get("changes")) {
                    out.println("reloaded: " + change.asText());
                }
            });
        }
    }

    @Command(name = "cache", mixinStandardHelpOptions = true, description = "The answer cache: show, flush.",
            subcommands = {Cache.Show.class, Cache.Flush.class})
    static final class Cache implements Callable<Integer> {
        @ParentCommand
        CtlCommand ctl;
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            throw new CommandLine.ParameterException(spec.commandLine(), "cache needs show or flush");
        }

        @Command(name = "show", mixinStandardHelpOptions = true,
                description = "The answers kept for NAME: type, RCODE, records, seconds left fresh, the transport (udp with"
                        + " the payload size the query was asked with, or tcp), the query's flags.")
        static final class Show implements Callable<Integer> {
            @ParentCommand
            Cache cache;
            @Spec
            CommandLine.Model.CommandSpec spec;
            @Parameters(index = "0", paramLabel = "NAME")
            String name;

            @Override
            public Integer call() {
                if (name.isBlank()) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "NAME is empty");
                }
                return cache.ctl.run(spec.commandLine(), (c, out) -> {
                    JsonNode r = c.call("GET", "/api/v1/cache/" + AdminClient.encode(name), null);
                    List<String[]> rows = new ArrayList<>();
                    rows.add(new String[] {"TYPE", "RCODE", "RECORDS", "TTL", "TRANSPORT", "FLAGS"});
                    for (JsonNode a : r.get("answers")) {
                        List<String> flags = new ArrayList<>();
                        a.get("flags").forEach(f -> flags.add(f.asText()));
                        String transport = a.get("transport").asText()
                                + (a.has("udp-size") ? "/" + a.get("udp-size").asText() : "");
                        rows.add(new String[] {a.get("type").asText(), a.get("rcode").asText(), a.get("records").asText(),
                            a.get("stale").asBoolean() ? "stale" : a.get("ttl").asText(), transport, String.join(" ", flags)});
                    }
                    table(out, rows);
                });
            }
        }

        @Command(name = "flush", mixinStandardHelpOptions = true,
                description = "Remove NAME's cached answers (every type, unless --type), or with --all every answer.")
        static final class Flush implements Callable<Integer> {
            @ParentCommand
            Cache cache;
            @Spec
            CommandLine.Model.CommandSpec spec;
            @Parameters(index = "0", arity = "0..1", paramLabel = "NAME")
            String name;
            @Option(names = "--type", paramLabel = "TYPE", description = "Only this record type, e.g. AAAA.")
            String type;
            @Option(names = "--subtree", description = "Every name under NAME as well.")
            boolean subtree;
            @Option(names = "--all", description = "Every answer in the cache.")
            boolean all;

            @Override
            public Integer call() {
                if (all == (name != null)) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "give a NAME or --all");
                }
                if (name != null && name.isBlank()) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "NAME is empty (--all flushes every answer)");
                }
                if (all && (type != null || subtree)) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "--type and --subtree go with a NAME");
                }
                String path = all ? "/api/v1/cache" : "/api/v1/cache/" + AdminClient.encode(name)
                        + (type == null ? "" : "?type=" + AdminClient.encode(type))
                        + (subtree ? (type == null ? "?" : "&") + "subtree=true" : "");
                return cache.ctl.run(spec.commandLine(), (c, out) -> {
                    JsonNode r = c.call("DELETE", path, null);
                    long n = r.get("removed").asLong();
                    out.println("flushed " + n + (n == 1 ? " answer" : " answers") + (all ? "" : " "
                            + (r.get("type").isNull() ? "" : r.get("type").asText() + " ")
                            + (r.get("subtree").asBoolean() ? "under " : "of ") + r.get("name").asText()));
                });
            }
        }
    }

    @Command(name = "health", mixinStandardHelpOptions = true,
            description = "Whether sluice is alive and ready (listening, an upstream up).")
    static final class Health implements Callable<Integer> {
        @ParentCommand
        CtlCommand ctl;
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            return ctl.run(spec.commandLine(), (c, out) -> {
                c.call("GET", "/healthz", null);
                AdminClient.Reply ready = c.send("GET", "/readyz", null);
                if (ready.status() == 401) {
                    throw new AdminClient.Refused(ready.body().path("error").asText("unauthorized"));
                }
                if (ready.status() != 200) {
                    throw new AdminClient.Refused("alive, not ready: " + ready.body().path("reason").asText("HTTP "
                            + ready.status()));
                }
                out.println("alive, ready");
            });
        }
    }

    private static String budgetText(JsonNode l) {
        return l.path("unlimited").asBoolean(false) ? "unlimited"
                : l.get("queries").asText() + " per " + l.get("window").asText();
    }

    /** Left-aligned columns, two spaces apart. */
    private static void table(PrintWriter out, List<String[]> rows) {
        int[] widths = new int[rows.get(0).length];
        for (String[] r : rows) {
            for (int i = 0; i < r.length; i++) {
                widths[i] = Math.max(widths[i], r[i].length());
            }
        }
        for (String[] r : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < r.length; i++) {
                line.append(i == r.length - 1 ? r[i] : String.format("%-" + widths[i] + "s  ", r[i]));
            }
            out.println(line.toString().stripTrailing());
        }
    }
}
