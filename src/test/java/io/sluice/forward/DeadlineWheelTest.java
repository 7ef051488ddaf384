package io.sluice.forward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The deadline wheel against the plain rule: an entry comes out once its deadline is now or past, never before. */
class DeadlineWheelTest {
    private static final long TICK = 10_000_000L;

    @Test
    void entriesComeOutOnlyOnceDueWhateverTheirDistanceAndTheClocksSign() {
        for (long origin : new long[] {-5_000_000_000_000L, 0, Long.MAX_VALUE / 4}) {
            DeadlineWheel w = new DeadlineWheel(TICK, origin);
            SplittableRandom r = new SplittableRandom(origin);
            long[] deadlines = new long[2000];
            for (int i = 0; i < deadlines.length; i++) {
                // within a tick, a few turns of the wheel away, and behind the cursor already
                deadlines[i] = origin + r.nextLong(-TICK, 3 * 1024 * TICK);
                w.add(i, 7, deadlines[i]);
            }
            boolean[] out = new boolean[deadlines.length];
            for (long now = origin; now <= origin + 3 * 1024 * TICK + TICK; now += r.nextLong(1, 40 * TICK)) {
                for (long e = w.pollDue(now); e != DeadlineWheel.NONE; e = w.pollDue(now)) {
                    int slot = DeadlineWheel.slot(e);
                    assertEquals(7, DeadlineWheel.serial(e));
                    assertFalse(out[slot], "slot " + slot + " twice");
                    assertTrue(deadlines[slot] <= now, "slot " + slot + " before its deadline");
                    out[slot] = true;
                }
                for (int i = 0; i < deadlines.length; i++) {
                    assertEquals(deadlines[i] <= now, out[i], "slot " + i + " at " + (now - origin));
                }
            }
        }
    }

    @Test
    void aLongSleepLosesNothing() {
        DeadlineWheel w = new DeadlineWheel(TICK, 0);
        List<Integer> due = new ArrayList<>();
        w.add(1, 1, 5 * TICK);
        w.add(2, 1, 5000 * TICK); // five turns of the wheel away
        w.add(3, 1, 20_000 * TICK);
        long now = 10_000 * TICK; // nothing polled for many turns
        for (long e = w.pollDue(now); e != DeadlineWheel.NONE; e = w.pollDue(now)) {
            due.add(DeadlineWheel.slot(e));
        }
        assertEquals(List.of(1, 2), due.stream().sorted().toList());
        assertEquals(DeadlineWheel.NONE, w.pollDue(19_999 * TICK));
        assertEquals(3, DeadlineWheel.slot(w.pollDue(20_000 * TICK)));
    }
}
