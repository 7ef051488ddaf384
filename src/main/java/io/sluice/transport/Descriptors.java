package io.sluice.transport;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.channels.DatagramChannel;

/**
 * The kernel's descriptor behind a JDK channel, which the JDK keeps to itself: an epoll set needs
 * it, and so do the socket options the JDK has no name for. Needs {@code java.base/sun.nio.ch}
 * exported to sluice, as the jar's manifest and the test runner's flags do for Chronicle Map.
 */
final class Descriptors {
    private static final MethodHandle FD_VAL = fdVal();

    private Descriptors() {
    }

    private static MethodHandle fdVal() {
        try {
            return MethodHandles.lookup().findVirtual(Class.forName("sun.nio.ch.SelChImpl"), "getFDVal",
                    MethodType.methodType(int.class));
        } catch (ReflectiveOperationException | IllegalAccessError e) {
            return null;
        }
    }

    static int of(DatagramChannel channel) {
        if (FD_VAL == null) {
            throw new IllegalStateException(
                    "no socket descriptors: run with --add-exports java.base/sun.nio.ch=ALL-UNNAMED");
        }
        try {
            return (int) FD_VAL.invoke(channel);
        } catch (Throwable e) {
            throw new IllegalStateException("no descriptor for " + channel, e);
        }
    }
}
