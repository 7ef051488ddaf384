package io.sluice.posix;

import java.util.function.Consumer;

/**
 * Handles POSIX signals (TERM, INT, HUP, USR1) for the commands. The JDK has no public API for
 * this; {@code sun.misc.Signal} (module jdk.unsupported) is the one every JVM server uses, and this
 * is the only class that touches it.
 */
public final class Signals {
    private Signals() {
    }

    /**
     * Runs {@code action} with the signal's name (TERM, not SIGTERM) each time {@code name} arrives.
     * Returns false when the process was started with the signal ignored (under {@code nohup}, for
     * SIGHUP): the JVM then leaves it ignored, and {@code action} never runs.
     */
    public static boolean on(String name, Consumer<String> action) {
        return sun.misc.Signal.handle(new sun.misc.Signal(name), s -> action.accept(s.getName()))
                != sun.misc.SignalHandler.SIG_IGN;
    }
}
