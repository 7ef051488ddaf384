package io.sluice.transport;

import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;

/**
 * How UDP datagrams pass between sluice's sockets and its loops: through the JDK's channel, a
 * system call a datagram, or (JDK 22+ on Linux, x86-64 or AArch64) in batches, a {@code recvmmsg}
 * per read burst of a socket and a {@code sendmmsg} per socket at the end of a wake-up. Under load,
 * where a wake-up holds many datagrams, the batches spend less CPU a query; at a low rate, where it
 * holds one, the two spend alike (docs/benchmarks.md, "UDP in batches").
 *
 * <p>Chosen once, at the first use: the system property {@code sluice.udp-io} says {@code batched},
 * {@code jdk} or {@code auto} (the default: batched when the JVM can, and may call native code,
 * else jdk). Only the loops' forwarding and listening sockets use it; the health probes and the
 * load tools read through the JDK.
 */
public abstract class DatagramIo {
    /** The JDK's channels: a datagram a system call, each way. */
    static final DatagramIo JDK = new DatagramIo() {
        @Override
        public DatagramBuffer buffer(int bytes) {
            return new DatagramBuffer.OneAtATime(bytes);
        }

        @Override
        public DatagramSends sends(LongAdder ioErrors) {
            return new DatagramSends(ioErrors);
        }

        @Override
        public String toString() {
            return "a datagram a system call";
        }
    };

    private static final String BATCHED_CLASS = "io.sluice.transport.Mmsg";
    private static volatile DatagramIo chosen;
    /** Why the batches were not chosen, or null. */
    private static volatile String notBatched;

    /** Where a loop reads datagrams of at most {@code bytes}. */
    public abstract DatagramBuffer buffer(int bytes);

    /** How a loop's {@link WriteBatch} sends the datagrams it held back; a datagram the kernel refuses is counted in {@code ioErrors}. */
    public abstract DatagramSends sends(LongAdder ioErrors);

    /** What this JVM uses, chosen at the first call. */
    public static DatagramIo chosen() {
        DatagramIo io = chosen;
        if (io == null) {
            synchronized (DatagramIo.class) {
                io = chosen;
                if (io == null) {
                    chosen = io = choose(System.getProperty("sluice.udp-io", "auto").toLowerCase(Locale.ROOT));
                }
            }
        }
        return io;
    }

    /** For the startup line: what UDP goes through, and why not in batches when it does not. */
    public static String describe() {
        DatagramIo io = chosen();
        return "UDP " + io + (notBatched == null ? "" : " (" + notBatched + ")");
    }

    private static DatagramIo choose(String wanted) {
        if (wanted.equals("jdk")) {
            notBatched = "sluice.udp-io=jdk";
            return JDK;
        }
        if (!wanted.equals("auto") && !wanted.equals("batched")) {
            throw new IllegalArgumentException("sluice.udp-io: auto, batched or jdk, not " + wanted);
        }
        String why = whyNotBatched();
        if (why == null) {
            try {
                return (DatagramIo) Class.forName(BATCHED_CLASS).getDeclaredConstructor().newInstance();
            } catch (ReflectiveOperationException | LinkageError | IllegalStateException e) {
                why = "recvmmsg and sendmmsg unavailable: " + e;
            }
        }
        if (wanted.equals("batched")) {
            throw new IllegalStateException("sluice.udp-io=batched: " + why);
        }
        notBatched = why;
        return JDK;
    }

    private static String whyNotBatched() {
        if (Runtime.version().feature() < 22) {
            return "batches need JDK 22+";
        }
        String os = System.getProperty("os.name", "");
        String arch = System.getProperty("os.arch", "");
        if (!os.equals("Linux") || !(arch.equals("amd64") || arch.equals("aarch64"))) {
            return "batches need Linux on x86-64 or AArch64";
        }
        return null;
    }
}
