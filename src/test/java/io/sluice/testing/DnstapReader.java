package io.sluice.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The dnstap project's own reader ({@code dnstap -u PATH -j}, Debian's
 * golang-github-dnstap-golang-dnstap-cli) listening on a unix socket, with every message it
 * printed, as JSON: a dnstap {@code Message}'s fields, with its envelope's {@code identity} and
 * {@code version} beside them. Missing, the tests that need it are skipped, or fail with
 * {@code SLUICE_REQUIRE_DNSTAP} set (as {@code .ci/run} sets it).
 */
public final class DnstapReader implements AutoCloseable {
    private static final Path DNSTAP = Path.of("/usr/bin/dnstap");
    private static final ObjectMapper JSON = new ObjectMapper();
    private final Process process;
    private final List<JsonNode> messages = new ArrayList<>();
    private final StringBuilder errors = new StringBuilder();

    private DnstapReader(Process process) {
        this.process = process;
        Thread out = new Thread(() -> read(process.getInputStream(), true), "dnstap-reader-out");
        Thread err = new Thread(() -> read(process.getErrorStream(), false), "dnstap-reader-err");
        out.setDaemon(true);
        err.setDaemon(true);
        out.start();
        err.start();
    }

    /** Skips (or fails) the calling test unless the reader and fstrm_capture are installed. */
    public static void assumeInstalled() {
        Prerequisite.assume("dnstap tests", Files.isExecutable(DNSTAP)
                        && Files.isExecutable(Path.of("/usr/bin/fstrm_capture")),
                "the dnstap readers are not installed (apt-get install golang-github-dnstap-golang-dnstap-cli"
                        + " fstrm-bin)", "SLUICE_REQUIRE_DNSTAP");
    }

    /** Starts a reader listening on {@code socket}, and waits until the socket is there. */
    public static DnstapReader listen(Path socket) throws IOException, InterruptedException {
        Files.deleteIfExists(socket);
        DnstapReader r = new DnstapReader(new ProcessBuilder(DNSTAP.toString(), "-u", socket.toString(), "-j").start());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!Files.exists(socket)) {
            if (System.nanoTime() > deadline || !r.process.isAlive()) {
                r.close();
                throw new IOException("dnstap -u " + socket + " did not listen: " + r.errors());
            }
            Thread.onSpinWait();
        }
        return r;
    }

    private void read(java.io.InputStream in, boolean json) {
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                synchronized (this) {
                    if (json && line.startsWith("{")) {
                        JsonNode envelope = JSON.readTree(line);
                        ObjectNode message = (ObjectNode) envelope.get("message");
                        message.set("identity", envelope.get("identity"));
                        message.set("version", envelope.get("version"));
                        messages.add(message);
                    } else {
                        errors.append(line).append('\n');
                    }
                    notifyAll();
                }
            }
        } catch (IOException e) {
            // the reader was stopped
        }
    }

    /**
     * Waits up to 10 s until {@code n} messages printed so far match {@code which}, and gives them;
     * fails the test with what was printed otherwise.
     */
    public synchronized List<JsonNode> await(int n, Predicate<JsonNode> which) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            List<JsonNode> found = messages.stream().filter(which).toList();
            if (found.size() >= n) {
                return found;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("waited for " + n + " dnstap messages, found " + found.size() + " in:\n"
                        + messages + "\n" + errors);
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
    }

    /** Stops the reader where it is (SIGSTOP): it reads nothing until {@link #resume}. */
    public void pause() throws IOException, InterruptedException {
        signal("-STOP");
    }

    public void resume() throws IOException, InterruptedException {
        signal("-CONT");
    }

    private void signal(String which) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", which, String.valueOf(process.pid())).inheritIO().start();
        if (kill.waitFor() != 0) {
            throw new IOException("kill " + which + " " + process.pid() + " failed");
        }
    }

    /** Every message printed so far. */
    public synchronized List<JsonNode> messages() {
        return List.copyOf(messages);
    }

    public synchronized String errors() {
        return errors.toString();
    }

    /**
     * A predicate on a message's type ({@code CLIENT_QUERY}) and on the text of its DNS message, in
     * any letter case (sluice asks upstreams in a random one).
     */
    public static Predicate<JsonNode> of(String type, String inMessage) {
        String lower = inMessage.toLowerCase(java.util.Locale.ROOT);
        return m -> m.path("type").asText().equals(type)
                && (m.path("query_message").asText() + m.path("response_message").asText())
                        .toLowerCase(java.util.Locale.ROOT).contains(lower);
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
    }
}
