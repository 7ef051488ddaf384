package io.sluice.bench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * Names like the bench harness's spread set: a random label in front of one of {@code domains}
 * registrable domains under .com, .co.uk and .github.io.
 */
final class Workload {
    private static final String[] SUFFIXES = {"com", "co.uk", "github.io"};
    /** The same suffixes in wire form, root label included. */
    static final byte[][] WIRE_SUFFIXES = {
        {3, 'c', 'o', 'm', 0},
        {2, 'c', 'o', 2, 'u', 'k', 0},
        {6, 'g', 'i', 't', 'h', 'u', 'b', 2, 'i', 'o', 0},
    };
    private final String[] names;

    Workload(int count, int domains, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        names = new String[count];
        for (int i = 0; i < count; i++) {
            int d = r.nextInt(domains);
            names[i] = "x" + Long.toHexString(r.nextLong()) + ".d" + d + "." + SUFFIXES[d % SUFFIXES.length];
        }
    }

    static String domain(int d) {
        return "d" + d + "." + SUFFIXES[d % SUFFIXES.length];
    }

    String[] textNames() {
        return names.clone();
    }

    /** Each name in wire form, alone in a buffer at index 0. */
    ByteBuf[] wireNames() {
        ByteBuf[] out = new ByteBuf[names.length];
        for (int i = 0; i < names.length; i++) {
            out[i] = Unpooled.directBuffer(256);
            for (String label : names[i].split("\\.")) {
                out[i].writeByte(label.length());
                out[i].writeCharSequence(label, StandardCharsets.US_ASCII);
            }
            out[i].writeByte(0);
        }
        return out;
    }
}
