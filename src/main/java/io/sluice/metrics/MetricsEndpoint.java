package io.sluice.metrics;

import com.google.common.util.concurrent.ThreadFactoryBuilder;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

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
     * Starts serving every counter and gauge of {@code metrics} (read at each scrape) on {@code address}.
     *
     * @throws IOException when the address cannot be bound
     */
    public static MetricsEndpoint start(InetSocketAddress address, Registry metrics) throws IOException {
        HttpServer server = HttpServer.create(address, 16);
        server.setExecutor(Executors.newSingleThreadExecutor(
                new ThreadFactoryBuilder().setNameFormat("sluice-metrics").setDaemon(true).build()));
        server.createContext("/metrics", exchange -> {
            try (exchange) {
                if (!"GET".equals(exchange.getRequestMethod())) {
                    exchange.sendResponseHeaders(405, -1);
                    return;
                }
                byte[] body = render(metrics).getBytes(StandardCharsets.UTF_8);
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

    /** Every counter and gauge in the Prometheus text format. */
    public static String render(Registry metrics) {
        StringBuilder sb = new StringBuilder();
        metrics.counterMeters().forEach((name, m) -> {
            sb.append("# HELP sluice_").append(name).append("_total ").append(m.help())
                    .append("\n# TYPE sluice_").append(name).append("_total counter\n");
            if (m.labelled() == null) {
                sb.append("sluice_").append(name).append("_total ").append(m.value().getAsLong()).append('\n');
            } else {
                m.labelled().forEach((labels, a) -> sb.append("sluice_").append(name).append("_total{").append(labels)
                        .append("} ").append(a.sum()).append('\n'));
            }
        });
        metrics.gaugeMeters().forEach((name, m) -> sb.append("# HELP sluice_").append(name).append(' ')
                .append(m.help()).append("\n# TYPE sluice_").append(name).append(" gauge\n")
                .append("sluice_").append(name).append(' ').append(m.value().getAsLong()).append('\n'));
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
