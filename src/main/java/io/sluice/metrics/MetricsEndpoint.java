package io.sluice.metrics;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.sluice.transport.Addresses;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * sluice's metrics and the JVM's as Prometheus serves them: a {@link PrometheusRegistry} that
 * collects the {@link Registry} at each scrape, with the client's JVM metrics ({@code jvm_*}).
 * Served on the admin listener's {@code /metrics}, and on {@code --metrics HOST:PORT} by the
 * client's own HTTP server, on its own threads: a scrape never touches an event loop beyond
 * reading the counters.
 */
public final class MetricsEndpoint implements AutoCloseable {
    /**
     * The JVM's metrics, registered once per process and collected into each endpoint's registry:
     * {@link JvmMetrics} keeps every registry it registers with for the process's life, so one
     * registration per endpoint kept each stopped sluice's registry, and the tables its gauges
     * read, alive (a test suite that starts sluice many times ran out of heap).
     */
    private static final PrometheusRegistry JVM = jvm();
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private HTTPServer server;
    private InetSocketAddress bound;

    public MetricsEndpoint(Registry metrics) {
        registry.register(metrics::snapshot);
        registry.register((MultiCollector) JVM::scrape);
    }

    private static PrometheusRegistry jvm() {
        PrometheusRegistry jvm = new PrometheusRegistry();
        JvmMetrics.builder().register(jvm);
        return jvm;
    }

    /**
     * Serves {@code /metrics} on {@code address} as well; nowhere when it is null.
     *
     * @throws BindException when the address cannot be bound
     */
    public void serve(InetSocketAddress address) throws BindException {
        if (address == null) {
            return;
        }
        try {
            server = HTTPServer.builder().inetAddress(address.getAddress()).port(address.getPort()).registry(registry)
                    .buildAndStart();
        } catch (IOException e) {
            throw Addresses.bindFailure(address, "http (metrics)", e);
        }
        bound = new InetSocketAddress(address.getAddress(), server.getPort());
    }

    /** Everything in the Prometheus text format. */
    public String text() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            PrometheusTextFormatWriter.create().write(out, registry.scrape());
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a byte array does not fail
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /** Where {@link #serve} bound, port resolved; null when it was not called. */
    public InetSocketAddress address() {
        return bound;
    }

    @Override
    public void close() {
        if (server != null) {
            server.close();
        }
    }
}
