package io.sluice.admin;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** The dashboard: one page with its script and styles inline, served from the jar, and its token form. */
final class Dashboard {
    private static final byte[] PAGE = load("dashboard.html");
    private static final byte[] TOKEN_PAGE = load("token.html");

    private Dashboard() {
    }

    static byte[] page() {
        return PAGE;
    }

    /** What a browser gets without the token: a form that asks for it and loads the dashboard with it. */
    static byte[] tokenPage() {
        return TOKEN_PAGE;
    }

    private static byte[] load(String name) {
        try (InputStream in = Dashboard.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException(name + " is missing from the jar");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
