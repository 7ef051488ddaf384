package io.sluice.admin;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** The dashboard: one page with its script and styles inline, served from the jar. */
final class Dashboard {
    private static final byte[] PAGE = load();

    private Dashboard() {
    }

    static byte[] page() {
        return PAGE;
    }

    private static byte[] load() {
        try (InputStream in = Dashboard.class.getResourceAsStream("dashboard.html")) {
            if (in == null) {
                throw new IllegalStateException("dashboard.html is missing from the jar");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
