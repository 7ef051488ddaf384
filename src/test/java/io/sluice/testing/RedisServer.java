package io.sluice.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code redis-server} process on a free loopback port, for tests. Without Debian's
 * {@code redis-server} installed the tests that need one are skipped, with one line saying so;
 * with {@code SLUICE_REQUIRE_REDIS} set (as {@code .ci/run} does) they fail instead.
 */
public final class RedisServer implements AutoCloseable {
    private final Path dir;
    private final int port;
    private final List<String> extra;
    private Process process;

    private RedisServer(Path dir, int port, List<String> extra) {
        this.dir = dir;
        this.port = port;
        this.extra = extra;
    }

    /** Skips (or, when Redis is required, fails) the calling test unless redis-server is installed. */
    public static void assumeInstalled() {
        Prerequisite.assume("Redis tests", onPath("redis-server") && onPath("redis-cli"),
                "redis-server and redis-cli are not installed (apt-get install redis-server)", "SLUICE_REQUIRE_REDIS");
    }

    private static boolean onPath(String program) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (Files.isExecutable(Path.of(d, program))) {
                return true;
            }
        }
        return false;
    }

    /** Starts one in {@code dir} (its working directory), with extra {@code redis-server} arguments. */
    public static RedisServer start(Path dir, String... extra) throws IOException, InterruptedException {
        for (int attempt = 1; ; attempt++) {
            int port;
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                port = s.getLocalPort();
            }
            RedisServer r = new RedisServer(dir, port, List.of(extra));
            // the port can be taken between the probe and redis binding it: then another
            if (r.tryStart()) {
                return r;
            }
            if (attempt == 5) {
                r.failToStart();
            }
        }
    }

    /** (Re)starts the process on the same port. */
    public void start() throws IOException, InterruptedException {
        if (!tryStart()) {
            failToStart();
        }
    }

    /** Launches redis-server and waits until it answers PING; false (and nothing left running) if it does not. */
    private boolean tryStart() throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("redis-server", "--port", Integer.toString(port),
                "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir.toString()));
        cmd.addAll(extra);
        process = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log().toFile()).start();
        boolean answers = false;
        try {
            answers = Await.result("redis-server on port " + port + " to answer PING or exit", Duration.ofSeconds(10),
                    () -> "+PONG".equals(command("PING")) ? Boolean.TRUE : process.isAlive() ? null : Boolean.FALSE);
            return answers;
        } finally {
            if (!answers) {
                process.destroyForcibly();
            }
        }
    }

    private void failToStart() throws IOException {
        fail("redis-server on port " + port + " did not start: " + Files.readString(log()));
    }

    private Path log() {
        return dir.resolve("redis-" + port + ".log");
    }

    /** SIGKILL: Redis vanishes as in a crash. */
    public void kill() throws IOException, InterruptedException {
        pause(false); // a stopped process would not die until continued
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** SIGSTOP or SIGCONT: a Redis that holds its connections but answers nothing, then resumes. */
    public void pause(boolean paused) throws IOException, InterruptedException {
        new ProcessBuilder("kill", paused ? "-STOP" : "-CONT", Long.toString(process.pid())).start().waitFor();
    }

    public int port() {
        return port;
    }

    public String uri() {
        return "redis://127.0.0.1:" + port;
    }

    public String hostPort() {
        return "127.0.0.1:" + port;
    }

    /**
     * Sends one inline command and returns the first line of the reply, or null when nothing
     * answers; enough for PING, GET and PTTL.
     */
    public String command(String line) {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(2000);
            OutputStream out = s.getOutputStream();
            out.write((line + "\r\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = s.getInputStream();
            StringBuilder reply = new StringBuilder();
            int c;
            while ((c = in.read()) != -1 && c != '\n') {
                reply.append((char) c);
            }
            String first = reply.toString().strip();
            if (first.startsWith("$") && !first.equals("$-1")) {
                StringBuilder value = new StringBuilder();
                while ((c = in.read()) != -1 && c != '\n') {
                    value.append((char) c);
                }
                return value.toString().strip();
            }
            return first;
        } catch (IOException e) {
            return null;
        }
    }

    /** Runs {@code redis-cli} with {@code args}; returns its output, failing on a non-zero exit. */
    public static String cli(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("redis-cli"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            fail("redis-cli " + String.join(" ", args) + ": " + out);
        }
        return out;
    }

    /**
     * Three masters made into a Redis Cluster with {@code redis-cli --cluster create}, each in its
     * own directory under {@code dir}.
     */
    public static List<RedisServer> cluster(Path dir) throws Exception {
        return cluster(dir, 0);
    }

    /**
     * Three masters and {@code replicas} replicas of each made into a Redis Cluster with
     * {@code redis-cli --cluster create}, each in its own directory under {@code dir}, the masters
     * first. With replicas, a master that stops answering is failed over after about a second
     * ({@code cluster-node-timeout}; 2 s without).
     */
    public static List<RedisServer> cluster(Path dir, int replicas) throws Exception {
        List<RedisServer> nodes = new ArrayList<>();
        List<String> create = new ArrayList<>(List.of("--cluster", "create"));
        for (int i = 0; i < 3 * (1 + replicas); i++) {
            Path d = Files.createDirectories(dir.resolve("node" + i));
            RedisServer r = start(d, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                    "--cluster-node-timeout", replicas > 0 ? "1000" : "2000");
            nodes.add(r);
            create.add(r.hostPort());
        }
        create.addAll(List.of("--cluster-replicas", Integer.toString(replicas), "--cluster-yes"));
        cli(create.toArray(new String[0]));
        for (RedisServer r : nodes) {
            Await.result("node " + r.hostPort() + " to see the cluster ready", Duration.ofSeconds(20),
                    () -> cli("-p", Integer.toString(r.port), "cluster", "info").contains("cluster_state:ok") ? r : null);
        }
        // redis-cli makes the first three the masters; a replica is ready once its link to its master is up
        for (RedisServer r : nodes.subList(3, nodes.size())) {
            Await.result("replica " + r.hostPort() + " to be in sync", Duration.ofSeconds(20),
                    () -> cli("-p", Integer.toString(r.port), "info", "replication").contains("master_link_status:up")
                            ? r : null);
        }
        return nodes;
    }

    /** The first word of {@code ROLE}: master or slave. */
    public String role() throws IOException, InterruptedException {
        return cli("-p", Integer.toString(port), "role").lines().findFirst().orElse("").strip();
    }

    @Override
    public void close() throws IOException, InterruptedException {
        kill();
    }
}
