package io.sluice.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.domain.DomainProbe;
import io.sluice.domain.RegistrableDomains;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/** The flat counter table: its slots' states, its bound, and what a decision allocates. */
class CounterTableTest {
    private static final CounterTable.SlotPredicate ALL_IDLE = (slot, key, word) -> true;
    private static final CounterTable.SlotPredicate NONE_IDLE = (slot, key, word) -> false;
    private static final CounterTable.SlotVisitor NOTHING = (slot, key) -> { };

    /** A hash whose two buckets of a two-bucket table are {@code b1} and {@code b2}, told apart by {@code n}. */
    private static long hash(int b1, int b2, int n) {
        return (long) b2 << 63 | (long) b1 << 31 | (long) n << 8;
    }

    @Test
    void aRetiredSlotIsPassedOverThenEmptiedAPassLaterAndTakenByAnotherDomain() {
        CounterTable t = new CounterTable(1); // two buckets of eight
        long a = hash(0, 1, 1);
        long b = hash(0, 1, 2);
        int sa = t.claim(a, 0);
        long fpA = CounterTable.fingerprint(a);
        assertTrue(t.compareAndSetWord(sa, fpA, 0, 42));
        assertEquals(1, t.live());
        assertEquals(1, t.retireIdle(ALL_IDLE, NOTHING), "retired");
        assertEquals(0, t.live());
        assertEquals(CounterTable.NONE, t.find(a), "a retired slot matches nothing");
        assertTrue(t.retired(sa, fpA));
        assertFalse(t.compareAndSetWord(sa, fpA, 42, 43), "no count lands on it");
        List<Integer> emptied = new ArrayList<>();
        t.emptyRetired((slot, key) -> emptied.add(slot));
        assertEquals(List.of(sa), emptied, "emptied a grace later");
        int sb = t.claim(b, 0);
        assertEquals(sa, sb, "the first empty slot of the bucket");
        assertEquals(1, t.live());
        assertEquals(0, t.word(sa), "a fresh word");
        assertEquals(0, t.wordOf(sa, fpA), "a holder of the old domain reads nothing of the new one");
        assertFalse(t.compareAndSetWord(sa, fpA, 0, 1), "nor counts on it");
    }

    @Test
    void aSlotHoldsOnlyItsOwnDomainAndNothingWhileBeingEmptied() {
        CounterTable t = new CounterTable(1);
        long a = hash(0, 1, 1);
        int sa = t.claim(a, 0);
        long fpA = CounterTable.fingerprint(a);
        assertTrue(t.holds(sa, fpA));
        assertFalse(t.holds(sa, CounterTable.fingerprint(hash(0, 1, 2))), "another domain's fingerprint");
        long k = t.key(sa);
        assertTrue(t.compareAndSetKey(sa, k, k | CounterTable.EMPTYING));
        assertFalse(t.holds(sa, fpA), "being emptied");
        assertTrue(t.compareAndSetKey(sa, k | CounterTable.EMPTYING, k));
        assertTrue(t.compareAndSetWord(sa, fpA, 0, CounterTable.DEAD + 1), "a word one bit from DEAD");
        assertTrue(t.holds(sa, fpA));
    }

    @Test
    void aDomainWhoseTwoBucketsAreFullGetsNoSlot() {
        CounterTable t = new CounterTable(1);
        for (int n = 1; n <= 2 * CounterTable.BUCKET_SLOTS; n++) {
            assertNotEquals(CounterTable.NONE, t.claim(hash(n % 2, (n + 1) % 2, n), 0));
        }
        assertEquals(CounterTable.NONE, t.claim(hash(0, 1, 99), 0));
        assertEquals(2 * CounterTable.BUCKET_SLOTS, t.live());
        assertEquals(0, t.retireIdle(NONE_IDLE, NOTHING));
    }

    @Test
    void aTableHoldsItsBoundWhileDomainsComeAndGo() {
        int bound = 100_000;
        CounterTable t = new CounterTable(bound);
        SplittableRandom random = new SplittableRandom(20261202);
        int filling = 0;
        for (int i = 0; i < bound; i++) {
            filling += t.claim(random.nextLong(), 0) == CounterTable.NONE ? 1 : 0;
        }
        // Four-slot buckets filled first with room, the table before this one, left 0.07% of these
        // without a slot and 0.27% of the claims below.
        assertTrue(filling <= bound / 10_000, filling + " of the bound's " + bound + " claims found both buckets full");
        int claims = 0;
        int without = 0;
        for (int round = 0; round < 10; round++) { // a tenth retired by a pass, emptied, replaced
            int retired = t.retireIdle((slot, key, word) -> random.nextInt(10) == 0, NOTHING);
            t.emptyRetired(NOTHING);
            for (int i = 0; i < retired; i++, claims++) {
                without += t.claim(random.nextLong(), 0) == CounterTable.NONE ? 1 : 0;
            }
        }
        assertTrue(without <= claims / 1000, without + " of " + claims + " claims found both buckets full");
    }

    @Test
    void loopsClaimingOneNewDomainAtOnceGetOneSlot() throws Exception {
        for (int round = 0; round < 200; round++) {
            CounterTable t = new CounterTable(64);
            long h = 0x9E3779B97F4A7C15L * (round + 1);
            int[] got = new int[4];
            CountDownLatch go = new CountDownLatch(1);
            Thread[] threads = new Thread[got.length];
            for (int i = 0; i < threads.length; i++) {
                int me = i;
                threads[i] = new Thread(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    got[me] = t.claim(h, 0);
                });
                threads[i].start();
            }
            go.countDown();
            for (Thread th : threads) {
                th.join();
            }
            assertEquals(1, t.live(), "round " + round);
            for (int g : got) {
                assertEquals(got[0], g, "round " + round);
            }
        }
    }

    @Test
    void aFlagMovesOnceWhoeverTriesIt() {
        CounterTable t = new CounterTable(8);
        long h = 12345;
        int s = t.claim(h, 0);
        long fp = CounterTable.fingerprint(h);
        assertTrue(t.swapFlag(s, fp, CounterTable.FLOODED, true));
        assertFalse(t.swapFlag(s, fp, CounterTable.FLOODED, true), "already set");
        assertEquals(s, t.find(h), "a flag is not part of the fingerprint");
        assertFalse(t.swapFlag(s, fp + 8, CounterTable.FLOODED, false), "another domain's");
        assertTrue(t.swapFlag(s, fp, CounterTable.FLOODED, false));
    }

    /** Allocated bytes of this thread, as the JVM counts them. */
    private static long allocated() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }

    @Test
    void aDecisionAllocatesNothingForANewDomainOrAKnownOne() {
        RegistrableDomains psl = RegistrableDomains.fromGuava();
        DomainLimiter l = new DomainLimiter(Algorithm.of(io.sluice.config.LimitSettings.Algorithm.FIXED_WINDOW),
                new HeapCounters(), LimitRules.of(new PolicyTable(Policy.of(1000, Duration.ofSeconds(1), 0), Map.of())), 100_000,
                new ManualClock());
        io.netty.buffer.ByteBuf[] names = new io.netty.buffer.ByteBuf[20_000]; // wire names, as queries hold them
        for (int i = 0; i < names.length; i++) {
            names[i] = io.netty.buffer.Unpooled.wrappedBuffer(io.sluice.domain.DomainBytes.fromText("www.d" + i
                    + ".com"));
        }
        DomainProbe p = new DomainProbe();
        for (int i = 0; i < 10_000; i++) { // the first half, twice: warm
            psl.reduce(names[i], 0, names[i].readableBytes(), p);
            Decide.allowed(l, p);
            Decide.allowed(l, p);
        }
        long before = allocated();
        for (int i = 10_000; i < 20_000; i++) { // new domains, then each once more
            psl.reduce(names[i], 0, names[i].readableBytes(), p);
            Decide.allowed(l, p);
            Decide.allowed(l, p);
        }
        long bytes = allocated() - before;
        assertEquals(20_000, l.tracked());
        assertTrue(bytes < 20_000, "allocated " + bytes + " bytes in 20,000 decisions, 10,000 of them of new domains");
    }
}
