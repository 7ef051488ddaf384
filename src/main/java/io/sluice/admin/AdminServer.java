package io.sluice.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.common.util.concurrent.ThreadFactoryBuilder;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.sluice.config.ConfigException;
import io.sluice.transport.Addresses;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin listener: the JSON API under {@code /api/v1/}, {@code /healthz}, {@code /readyz},
 * {@code /metrics} and the dashboard at {@code /}. Served by the JDK's HTTP server on a thread of
 * its own, so that nothing here runs on an event loop; what it changes reaches the loops through
 * the structures it calls ({@link Operations}), never a lock a loop takes.
 *
 * <p>With a token, every request but {@code /healthz} must carry {@code Authorization: Bearer
 * TOKEN}, compared in constant time.
 */
public final class AdminServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AdminServer.class);
    /** Bigger request bodies are refused: a limit is a few dozen bytes. */
    private static final int MAX_BODY_BYTES = 64 << 10;

    private final HttpServer server;
    private final ObjectMapper json = new ObjectMapper();
    private final Operations ops;
    private final byte[] token;

    private AdminServer(HttpServer server, Operations ops, byte[] token) {
        this.server = server;
        this.ops = ops;
        this.token = token;
    }

    /**
     * Starts serving {@code ops} on {@code address}.
     *
     * @param tokenFile the bearer token's file, or null for none
     * @throws BindException   when the address cannot be bound
     * @throws ConfigException when the token file cannot be read or is empty
     */
    public static AdminServer start(InetSocketAddress address, Path tokenFile, Operations ops)
            throws BindException, ConfigException {
        byte[] token = null;
        if (tokenFile != null) {
            String t;
            try {
                t = Files.readString(tokenFile).strip();
            } catch (IOException e) {
                throw new ConfigException("admin.token-file: cannot read " + tokenFile + ": " + e.getMessage());
            }
            if (t.isEmpty()) {
                throw new ConfigException("admin.token-file: " + tokenFile + " is empty");
            }
            token = t.getBytes(StandardCharsets.UTF_8);
        }
        HttpServer server;
        try {
            server = HttpServer.create(address, 64);
        } catch (IOException e) {
            throw Addresses.bindFailure(address, "http (admin)", e);
        }
        server.setExecutor(Executors.newSingleThreadExecutor(
                new ThreadFactoryBuilder().setNameFormat("sluice-admin").setDaemon(true).build()));
        AdminServer admin = new AdminServer(server, ops, token);
        server.createContext("/", admin::handle);
        server.start();
        return admin;
    }

    /** The bound address, port resolved. */
    public InetSocketAddress address() {
        return server.getAddress();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            Response r;
            try {
                r = route(exchange);
            } catch (ApiException e) {
                r = error(e.status, e.getMessage());
            } catch (RuntimeException e) {
                log.warn("admin: {} {}: {}", exchange.getRequestMethod(), exchange.getRequestURI(), e.toString());
                r = error(500, "internal error: " + e.getMessage());
            }
            exchange.getResponseHeaders().set("Content-Type", r.contentType);
            exchange.getResponseHeaders().set("Cache-Control", "no-store");
            if (r.status == 401) {
                exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer");
            }
            exchange.sendResponseHeaders(r.status, r.body.length == 0 ? -1 : r.body.length);
            if (r.body.length > 0) {
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(r.body);
                }
            }
        }
    }

    private Response route(HttpExchange ex) throws IOException {
        URI uri = ex.getRequestURI();
        String path = uri.getPath(); // percent-escapes decoded as UTF-8, '+' left alone
        String method = ex.getRequestMethod();
        if (path.equals("/healthz")) {
            only(method, "GET");
            return json(200, json.createObjectNode().put("status", "alive"));
        }
        boolean page = path.equals("/") || path.equals("/index.html");
        if (token != null && !authorized(ex.getRequestHeaders().getFirst("Authorization"))) {
            if (page && method.equals("GET")) {
                // A browser's navigation carries no bearer token: the 401 is a form that asks for
                // it, then loads the dashboard with it (and the dashboard sends it with every call).
                return new Response(401, "text/html; charset=utf-8", Dashboard.tokenPage());
            }
            throw new ApiException(401, "this admin API needs Authorization: Bearer TOKEN (admin.token-file)");
        }
        if (page) {
            only(method, "GET");
            return new Response(200, "text/html; charset=utf-8", Dashboard.page());
        }
        String client = ex.getRemoteAddress().getAddress().getHostAddress();
        if (path.equals("/readyz")) {
            only(method, "GET");
            String notReady = ops.notReady();
            return notReady == null ? json(200, json.createObjectNode().put("status", "ready"))
                    : json(503, json.createObjectNode().put("status", "not ready").put("reason", notReady));
        }
        if (path.equals("/metrics")) {
            only(method, "GET");
            return new Response(200, "text/plain; version=0.0.4; charset=utf-8",
                    ops.metricsText().getBytes(StandardCharsets.UTF_8));
        }
        if (path.equals("/api/v1/limits")) {
            only(method, "GET");
            return json(200, ops.limits());
        }
        if (path.startsWith("/api/v1/limits/")) {
            String domain = path.substring("/api/v1/limits/".length());
            return switch (method) {
                case "PUT" -> json(200, ops.setLimit(domain, body(ex), client));
                case "DELETE" -> json(200, ops.removeLimit(domain, client));
                case "GET" -> json(200, ops.limit(domain));
                default -> throw new ApiException(405, method + " is not allowed here (GET, PUT, DELETE)");
            };
        }
        if (path.equals("/api/v1/top")) {
            only(method, "GET");
            Map<String, String> query = query(uri.getRawQuery());
            return json(200, ops.top(query.getOrDefault("n", "20"), query.getOrDefault("by", "queries")));
        }
        if (path.equals("/api/v1/upstreams")) {
            only(method, "GET");
            return json(200, ops.upstreams());
        }
        if (path.equals("/api/v1/stats")) {
            only(method, "GET");
            return json(200, ops.stats());
        }
        if (path.equals("/api/v1/cache") || path.startsWith("/api/v1/cache/")) {
            // Only the bare path names every answer: an empty name (a shell's unset variable in
            // "/api/v1/cache/$NAME") is a bad request, never a flush of everything.
            String name = path.equals("/api/v1/cache") ? null : path.substring("/api/v1/cache/".length());
            if (name != null && name.isEmpty()) {
                throw new ApiException(400, "a name is needed after /api/v1/cache/ (DELETE /api/v1/cache flushes every answer)");
            }
            if (method.equals("GET") && name != null) {
                return json(200, ops.cache(name));
            }
            only(method, "DELETE");
            Map<String, String> query = query(uri.getRawQuery());
            for (String k : query.keySet()) {
                if (!k.equals("type") && !k.equals("subtree")) {
                    throw new ApiException(400, "unknown parameter '" + k + "' (type, subtree)");
                }
            }
            return json(200, ops.flushCache(name, query.get("type"), query.get("subtree"), client));
        }
        if (path.equals("/api/v1/reload")) {
            only(method, "POST");
            return json(200, ops.reload(client));
        }
        throw new ApiException(404, "no such path: " + path);
    }

    private boolean authorized(String header) {
        if (header == null || !header.startsWith("Bearer ")) {
            return false;
        }
        return MessageDigest.isEqual(token, header.substring("Bearer ".length()).strip().getBytes(StandardCharsets.UTF_8));
    }

    private static void only(String method, String allowed) {
        if (!method.equals(allowed)) {
            throw new ApiException(405, method + " is not allowed here (" + allowed + ")");
        }
    }

    private JsonNode body(HttpExchange ex) throws IOException {
        byte[] bytes;
        try (InputStream in = ex.getRequestBody()) {
            bytes = in.readNBytes(MAX_BODY_BYTES + 1);
        }
        if (bytes.length > MAX_BODY_BYTES) {
            throw new ApiException(400, "the request body is over " + MAX_BODY_BYTES + " bytes");
        }
        if (bytes.length == 0) {
            throw new ApiException(400, "a JSON object is needed, such as {\"queries\": 100, \"window\": \"1s\"}");
        }
        try {
            JsonNode n = json.readTree(bytes);
            if (n == null || !n.isObject()) {
                throw new ApiException(400, "the body must be a JSON object");
            }
            return n;
        } catch (com.fasterxml.jackson.core.JacksonException e) {
            throw new ApiException(400, "the body is not JSON: " + e.getOriginalMessage());
        }
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> out = new HashMap<>();
        if (raw == null) {
            return out;
        }
        for (String pair : raw.split("&")) {
            int eq = pair.indexOf('=');
            try {
                String k = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
                String v = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
                out.put(k, v);
            } catch (IllegalArgumentException e) {
                throw new ApiException(400, "the query string is not well formed: " + e.getMessage());
            }
        }
        return out;
    }

    private Response json(int status, JsonNode body) throws IOException {
        return new Response(status, "application/json", json.writerWithDefaultPrettyPrinter().writeValueAsBytes(body));
    }

    private Response error(int status, String message) throws IOException {
        ObjectNode n = json.createObjectNode().put("error", message);
        return json(status, n);
    }

    private record Response(int status, String contentType, byte[] body) {
    }

    @Override
    public void close() {
        server.stop(0);
        ((ExecutorService) server.getExecutor()).shutdownNow();
    }
}
