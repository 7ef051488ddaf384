package io.sluice.ctl;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** A client of the admin API, for {@code sluice ctl}: one request, its JSON answer, or why not. */
final class AdminClient {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The server said no, or could not be reached: the one line to print. */
    static final class Refused extends Exception {
        Refused(String message) {
            super(message);
        }
    }

    /** A reply: its HTTP status and body. */
    record Reply(int status, JsonNode body) {
    }

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
    private final String base;
    private final String token;

    /** @param token the bearer token, or null */
    AdminClient(String hostPort, String token) {
        this.base = "http://" + hostPort;
        this.token = token;
    }

    /** The first message along the causes; the HTTP client's ConnectException has none. */
    private static String reason(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t.getMessage() != null) {
                return t.getMessage();
            }
            if (t instanceof java.net.ConnectException) {
                return "connection refused (is sluice running with --admin there?)";
            }
        }
        return e.getClass().getSimpleName();
    }

    static String encode(String pathPart) {
        return URLEncoder.encode(pathPart, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** The body of a 2xx reply; anything else is {@link Refused} with the server's error. */
    JsonNode call(String method, String path, JsonNode body) throws Refused {
        Reply r = send(method, path, body);
        if (r.status() / 100 != 2) {
            String error = r.body() != null && r.body().has("error") ? r.body().get("error").asText()
                    : "HTTP " + r.status();
            throw new Refused(error);
        }
        return r.body();
    }

    /** Any reply; only a failure to get one is {@link Refused}. */
    Reply send(String method, String path, JsonNode body) throws Refused {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(TIMEOUT)
                .header("Accept", "application/json");
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        try {
            b.method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body)));
            HttpResponse<byte[]> r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
            JsonNode parsed = null;
            if (r.body().length > 0) {
                try {
                    parsed = JSON.readTree(r.body());
                } catch (IOException notJson) {
                    throw new Refused(base + path + " answered HTTP " + r.statusCode() + " with a body that is not JSON");
                }
            }
            return new Reply(r.statusCode(), parsed);
        } catch (IOException e) {
            throw new Refused("cannot reach " + base + ": " + reason(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Refused("interrupted");
        }
    }
}
