package io.sluice.metrics;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * Serves every counter at {@code GET /metrics} in the Prometheus text format, on its own thread
 * (the JDK's HTTP server): a scrape never touches an event loop beyond reading the counters.
 */
public final class MetricsEndpoint implements AutoCloseable {
    private final HttpServer server;

    private MetricsEndpoint(HttpServer server) {
        this.server = server;
    }

    /**
     * Starts serving {@code meters} plus the {@code gauges} (read at each scrape) on {@code address}.
     *
     * @throws IOException when the address cannot be bound
     */
    public static MetricsEndpoint start(InetSocketAddress address, Meters meters, Map<String, Supplier<Long>> gauges)
            throws IOException {
        HttpServer server = HttpServer.create(address, 16);
        server.setExecutor(Executors.newSingleThreadExecutor(
                new ThreadFactoryBuilder().setNameFormat("sluice-metrics").setDaemon(true).build()));
        server.createContext("/metrics", exchange -> {
            try (exchange) {
                if (!"GET".equals(exchange.getRequestMethod())) {
                    exchange.sendResponseHeaders(405, -1);
                    return;
                }
                byte[] body = render(meters, gauges).getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
                exchange.sendResponseHeaders(200, body.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            }
        });
        server.start();
        return new MetricsEndpoint(server);
    }

    static String render(Meters meters, Map<String, Supplier<Long>> gauges) {
        StringBuilder sb = new StringBuilder();
        meters.snapshot().forEach((name, value) -> sb.append("# TYPE sluice_").append(name).append("_total counter\n")
                .append("sluice_").append(name).append("_total ").append(value).append('\n'));
        gauges.forEach((name, value) -> sb.append("# TYPE sluice_").append(name).append(" gauge\n")
                .append("sluice_").append(name).append(' ').append(value.get()).append('\n'));
        return sb.toString();
    }

    /** The bound address, port resolved. */
    public InetSocketAddress address() {
        return server.getAddress();
    }

    @Override
    public void close() {
        server.stop(0);
        ((ExecutorService) server.getExecutor()).shutdownNow();
    }
}
