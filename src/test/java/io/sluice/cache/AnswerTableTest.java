package io.sluice.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.sluice.config.CacheSettings;
import io.sluice.wire.AnswerKey;
import io.sluice.wire.QueryEdns;
import io.sluice.wire.QueryView;
import io.sluice.wire.ReplyRecords;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.ClientSubnetOption;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** The answer table alone: its ring, its index's clock, a reader racing writers, and what it allocates. */
class AnswerTableTest {
    private static final long FRESH = 60_000_000_000L;

    /** A query for {@code n<i>.example.} A, with what the cache reads of it. */
    private static final class Asked {
        final ByteBuf query;
        final QueryView view = new QueryView();
        final AnswerKey key = new AnswerKey();

        Asked(int i) {
            this(Message.newQuery(Record.newRecord(name(i), Type.A, DClass.IN)));
        }

        /** The query for name {@code i} from the Client Subnet network 10.n.n.0/24 ({@code network}'s two octets). */
        Asked(int i, int network) throws Exception {
            this(withSubnet(Message.newQuery(Record.newRecord(name(i), Type.A, DClass.IN)), network));
        }

        private Asked(Message m) {
            query = Unpooled.wrappedBuffer(m.toWire());
            view.read(query);
            assertTrue(key.of(query, view, new QueryEdns(), false, 1232));
        }

        private static Message withSubnet(Message m, int network) throws Exception {
            InetAddress address = InetAddress.getByAddress(new byte[] {10, (byte) (network >>> 8), (byte) network, 0});
            m.addRecord(new OPTRecord(1232, 0, 0, 0, List.of(new ClientSubnetOption(24, address))), Section.ADDITIONAL);
            return m;
        }
    }

    private static Name name(int i) {
        try {
            return Name.fromString("n" + i + ".example.");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** The address the answer for name {@code i} gives: its number, so that a reader can tell it. */
    private static InetAddress address(int i) throws Exception {
        return InetAddress.getByAddress(new byte[] {10, (byte) (i >>> 16), (byte) (i >>> 8), (byte) i});
    }

    /** Builds into {@code into} the entry for name {@code i}, with {@code extra} more A records (to vary its size). */
    private static void build(Asked q, int i, int extra, CachedAnswer into) throws Exception {
        build(q, i, extra, into, 0);
    }

    /** {@link #build(Asked, int, int, CachedAnswer)} at {@code now}: fresh for {@link #FRESH}, then stale for as long. */
    private static void build(Asked q, int i, int extra, CachedAnswer into, long now) throws Exception {
        Message r = new Message(0);
        r.getHeader().setFlag(Flags.QR);
        r.addRecord(Record.newRecord(name(i), Type.A, DClass.IN), Section.QUESTION);
        for (int k = 0; k <= extra; k++) {
            r.addRecord(new ARecord(name(i), DClass.IN, 300, address(i)), Section.ANSWER);
        }
        ByteBuf reply = Unpooled.wrappedBuffer(r.toWire());
        ReplyRecords records = new ReplyRecords();
        assertTrue(records.read(reply));
        assertTrue(into.build(q.key, reply, records, now, now + FRESH, now + 2 * FRESH, Long.MAX_VALUE));
    }

    /** The address of the first answer record of what {@code found} serves for {@code q}. */
    private static InetAddress served(CachedAnswer found, Asked q) throws Exception {
        ByteBuf out = found.write(UnpooledByteBufAllocator.DEFAULT, q.query, q.view, 0, false);
        Message m = new Message(ByteBufUtil.getBytes(out));
        out.release();
        return ((ARecord) m.getSection(Section.ANSWER).get(0)).getAddress();
    }

    @Test
    void anEntryTheRingHasOverwrittenIsAMissNeverAnotherAnswer() throws Exception {
        LongAdder evictions = new LongAdder();
        AnswerTable table = new AnswerTable(1000, 4096, 1, evictions, new LongAdder(), 100);
        CachedAnswer a = new CachedAnswer();
        List<Asked> asked = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            asked.add(new Asked(i));
            build(asked.get(i), i, 0, a);
            table.put(0, asked.get(i).key, a);
        }
        assertTrue(table.bytes() <= 4096, "bytes " + table.bytes());
        int found = 0;
        for (int i = 0; i < 200; i++) {
            if (table.find(asked.get(i).key, a, 0, 0)) {
                found++;
                assertEquals(address(i), served(a, asked.get(i)));
                assertTrue(i >= 200 - 4096 / 100, "found " + i + ", which the ring no longer holds");
            }
        }
        assertTrue(found > 0 && found <= 4096 / 100, found + " found");
        assertEquals(found, table.entries());
        table.put(0, asked.get(0).key, a); // reclaims slots whose entries the ring overwrote
        assertTrue(evictions.sum() > 0);
    }

    @Test
    void aFloodOfNamesStoredOnceLeavesAFullCacheAsItWasAndANameStoredTwiceGetsIn() throws Exception {
        LongAdder rejected = new LongAdder();
        AnswerTable table = new AnswerTable(4, 1 << 20, 1, new LongAdder(), rejected, 100); // one bucket
        CachedAnswer a = new CachedAnswer();
        for (int i = 0; i < 4; i++) {
            Asked q = new Asked(i);
            build(q, i, 0, a);
            table.put(0, q.key, a);
        }
        for (int i = 100; i < 1100; i++) {
            Asked once = new Asked(i);
            build(once, i, 0, a);
            table.put(0, once.key, a);
        }
        // the doorkeeper's false positives admit a few (0.95% at the default's 16 bits a name)
        long admitted = 1000 - rejected.sum();
        assertTrue(admitted <= 10, admitted + " of 1,000 names stored once admitted");
        int stayed = 0;
        for (int i = 0; i < 4; i++) {
            stayed += table.find(new Asked(i).key, a, 0, 0) ? 1 : 0;
        }
        assertTrue(stayed >= 4 - admitted, "the first four stay but for one per name admitted: " + stayed);
        Asked twice = new Asked(2000);
        build(twice, 2000, 0, a);
        table.put(0, twice.key, a);
        table.put(0, twice.key, a);
        assertTrue(table.find(twice.key, a, 0, 0), "admitted at its second store");
        assertEquals(4, table.entries());
    }

    @Test
    void aNameStoredOnceTakesTheSlotOfAnAnswerThatMayNoLongerBeServedEvenStale() throws Exception {
        LongAdder rejected = new LongAdder();
        LongAdder evictions = new LongAdder();
        AnswerTable table = new AnswerTable(4, 1 << 20, 1, evictions, rejected, 100); // one bucket
        CachedAnswer a = new CachedAnswer();
        for (int i = 0; i < 4; i++) {
            Asked q = new Asked(i);
            build(q, i, 0, a, i == 3 ? FRESH : 0); // the fourth is kept a minute longer than the rest
            table.put(0, q.key, a);
        }
        Asked stale = new Asked(100);
        build(stale, 100, 0, a, 2 * FRESH - 1); // the first three are stale, not yet past serving
        table.put(0, stale.key, a);
        assertEquals(1, rejected.sum(), "a stale answer keeps its slot against a name stored once");
        for (int i = 0; i < 3; i++) {
            Asked late = new Asked(200 + i);
            build(late, 200 + i, 0, a, 2 * FRESH);
            table.put(0, late.key, a);
            assertTrue(table.find(late.key, a, 0, 2 * FRESH), "stored once, into a dead answer's slot: " + i);
        }
        assertEquals(1, rejected.sum());
        assertEquals(3, evictions.sum());
        assertTrue(table.find(new Asked(3).key, a, 0, 2 * FRESH), "the answer still servable stays");
        Asked fifth = new Asked(300);
        build(fifth, 300, 0, a, 2 * FRESH);
        table.put(0, fifth.key, a);
        assertEquals(2, rejected.sum(), "a bucket of servable answers admits no name stored once");
    }

    @Test
    void theIndexTakesWhatTheConfigsHeapCheckCountsForIt() {
        for (int size : new int[] {1, 1_000, 1_000_003, 9_000_000}) {
            CacheSettings settings = new CacheSettings(size, 1 << 16, Duration.ofDays(1), Duration.ofHours(1),
                    Duration.ofSeconds(5), Duration.ZERO, Duration.ZERO, false, false, 100);
            AnswerTable table = new AnswerTable(size, 1 << 16, 1, new LongAdder(), new LongAdder(), 100);
            assertEquals(settings.indexBytes(), table.indexBytes(), "size " + size);
        }
    }

    @Test
    void aQuestionAskedFromManyNetworksKeepsAtMostItsBoundAndTakesNoMoreRoomThanThat() throws Exception {
        AnswerTable table = new AnswerTable(4096, 1 << 22, 1, new LongAdder(), new LongAdder(), 100);
        CachedAnswer a = new CachedAnswer();
        List<Asked> others = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            Asked q = new Asked(i);
            build(q, i, 0, a);
            table.put(0, q.key, a); // twice, so that each is admitted
            table.put(0, q.key, a);
            others.add(q);
        }
        long before = others.stream().filter(q -> table.find(q.key, a, 0, 0)).count();
        for (int network = 0; network < 3000; network++) {
            Asked q = new Asked(-1, network);
            build(q, -1, 0, a);
            table.put(0, q.key, a);
            table.put(0, q.key, a);
        }
        AtomicLong networks = new AtomicLong();
        table.forEach(AnswerTable.KeyFilter.names(name(-1).toWireCanonical(), Type.A, false),
                (entry, length) -> networks.incrementAndGet());
        long lost = before - others.stream().filter(q -> table.find(q.key, a, 0, 0)).count();
        assertTrue(networks.get() <= 104, networks + " networks kept, past 100 rounded up to whole buckets");
        assertTrue(networks.get() >= 64, networks + " networks kept: the bound's buckets are used");
        assertTrue(lost <= networks.get(), lost + " other answers lost to " + networks + " networks");
        Asked last = new Asked(-1, 2999);
        assertTrue(table.find(last.key, a, 0, 0), "the network asked last is kept");
        assertEquals(address(-1), served(a, last));
    }

    @Test
    void aNameAskedBetweenTheHandsPassesStaysAndLeavesWhenNoLongerAsked() throws Exception {
        AnswerTable table = new AnswerTable(4, 1 << 20, 1, new LongAdder(), new LongAdder(), 100); // one bucket
        CachedAnswer a = new CachedAnswer();
        Asked hot = new Asked(-1);
        build(hot, -1, 0, a);
        table.put(0, hot.key, a);
        for (int i = 0; i < 3; i++) {
            assertTrue(table.find(hot.key, a, 0, 0));
        }
        for (int i = 0; i < 1100; i++) {
            Asked other = new Asked(i);
            build(other, i, 0, a);
            table.put(0, other.key, a); // twice, so that each is admitted
            table.put(0, other.key, a);
            if (i < 1000) {
                assertTrue(table.find(hot.key, a, 0, 0), "asked after each other name, it stays: lost at " + i);
            }
        }
        assertFalse(table.find(hot.key, a, 0, 0), "no longer asked, it went");
        assertEquals(4, table.entries());
    }

    @Test
    void aHitInTheRingsOlderHalfCopiesTheEntryToItsHead() throws Exception {
        AnswerTable table = new AnswerTable(1000, 8192, 1, new LongAdder(), new LongAdder(), 100);
        CachedAnswer a = new CachedAnswer();
        Asked hot = new Asked(-1);
        build(hot, -1, 0, a);
        table.put(0, hot.key, a);
        for (int i = 0; i < 2000; i++) { // the ring turns many times
            Asked once = new Asked(i);
            build(once, i, 0, a);
            table.put(0, once.key, a);
            table.put(0, once.key, a);
            if (i % 8 == 0) {
                assertTrue(table.find(hot.key, a, 0, 0), "lost at " + i);
                assertEquals(address(-1), served(a, hot));
            }
        }
    }

    /** A one-ring table holding {@code old}'s answer (name -1), then 40 others: over half the ring, so a hit on it moves it. */
    private static AnswerTable withAnEntryInTheOlderHalf(Asked old, CachedAnswer a) throws Exception {
        AnswerTable table = new AnswerTable(1000, 8192, 1, new LongAdder(), new LongAdder(), 100);
        build(old, -1, 0, a);
        table.put(0, old.key, a);
        for (int i = 0; i < 40; i++) {
            Asked other = new Asked(i);
            build(other, i, 0, a);
            table.put(0, other.key, a);
        }
        return table;
    }

    @Test
    void aFailedRefreshOfAnEntryJustMovedToTheHeadIsKept() throws Exception {
        CachedAnswer a = new CachedAnswer();
        Asked stale = new Asked(-1);
        AnswerTable table = withAnEntryInTheOlderHalf(stale, a);
        long now = FRESH + FRESH / 2;
        assertTrue(table.find(stale.key, a, 0, 0));
        assertFalse(a.staleWithoutAskingAt(now));
        a.recheckAt(now + 1000); // what AnswerCache.refreshFailed does
        table.replace(0, a);
        assertTrue(table.find(stale.key, a, 0, 0));
        assertTrue(a.staleWithoutAskingAt(now), "the recheck time was kept, in the slot the move left");
    }

    @Test
    void anEntryPastItsStaleTimeIsAMissAndIsNotMoved() throws Exception {
        CachedAnswer a = new CachedAnswer();
        Asked dead = new Asked(-1);
        AnswerTable table = withAnEntryInTheOlderHalf(dead, a);
        long written = table.bytes();
        assertFalse(table.find(dead.key, a, 0, 2 * FRESH), "past its stale time");
        assertEquals(written, table.bytes(), "not copied to the head");
        assertTrue(table.find(dead.key, a, 0, 2 * FRESH - 1));
        assertTrue(table.bytes() > written, "a hit before then moves it");
    }

    @Test
    void aFailedRefreshIsKeptThoughAnotherLoopsHitMovedTheCount() throws Exception {
        AnswerTable table = new AnswerTable(1000, 1 << 16, 2, new LongAdder(), new LongAdder(), 100);
        CachedAnswer mine = new CachedAnswer();
        CachedAnswer theirs = new CachedAnswer();
        Asked stale = new Asked(-1);
        build(stale, -1, 0, mine);
        table.put(0, stale.key, mine);
        long now = FRESH + FRESH / 2;
        assertTrue(table.find(stale.key, mine, 0, 0));
        assertTrue(table.find(stale.key, theirs, 1, 0), "the other loop's hit adds one to the slot's count");
        mine.recheckAt(now + 1000); // what AnswerCache.refreshFailed does
        table.replace(0, mine);
        assertTrue(table.find(stale.key, theirs, 1, 0));
        assertTrue(theirs.staleWithoutAskingAt(now), "the recheck time was kept");
    }

    /** The flush of name {@code i}'s answers, as the admin API makes it. */
    private static AnswerTable.KeyFilter flushOf(int i) {
        byte[] text = io.sluice.domain.DomainBytes.fromText(name(i).toString());
        return AnswerTable.KeyFilter.names(java.util.Arrays.copyOf(text, text.length + 1), -1, false);
    }

    @Test
    void aFlushRemovesItsNamesOnlyAndWhatIsStoredAfterItStays() throws Exception {
        AnswerTable table = new AnswerTable(1000, 1 << 16, 1, new LongAdder(), new LongAdder(), 100);
        CachedAnswer a = new CachedAnswer();
        List<Asked> asked = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            asked.add(new Asked(i));
            build(asked.get(i), i, 0, a);
            table.put(0, asked.get(i).key, a);
        }
        assertEquals(1, table.remove(flushOf(3)));
        assertFalse(table.find(asked.get(3).key, a, 0, 0));
        assertTrue(table.find(asked.get(4).key, a, 0, 0), "another name's answer stays");
        assertEquals(0, table.remove(flushOf(3)));
        build(asked.get(3), 3, 0, a);
        table.put(0, asked.get(3).key, a);
        assertTrue(table.find(asked.get(3).key, a, 0, 0), "stored again after the flush");
        assertEquals(10, table.entries());
        assertEquals(10, table.remove(AnswerTable.KeyFilter.ALL));
        assertEquals(0, table.entries());
        assertFalse(table.find(asked.get(4).key, a, 0, 0));
    }

    /** What thread {@code me} of a {@link #race} does with name {@code i}, asked as {@code q}, each turn. */
    @FunctionalInterface
    private interface Turn {
        void take(int me, int i, Asked q, CachedAnswer a, ThreadLocalRandom random) throws Exception;
    }

    /** Runs {@code threads} threads for two seconds, each taking turns at random names of 100; rethrows the first failure. */
    private static void race(int threads, Turn turn) throws Exception {
        int names = 100;
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int me = t;
            all.add(new Thread(() -> {
                try {
                    List<Asked> asked = new ArrayList<>();
                    for (int i = 0; i < names; i++) {
                        asked.add(new Asked(i));
                    }
                    CachedAnswer a = new CachedAnswer();
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    while (!stop.get()) {
                        int i = random.nextInt(names);
                        turn.take(me, i, asked.get(i), a, random);
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                    stop.set(true);
                }
            }));
        }
        all.forEach(Thread::start);
        // A sleep by design: the race's length is its budget of interleavings, not a wait for anything to happen.
        Thread.sleep(2000);
        stop.set(true);
        for (Thread t : all) {
            t.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
    }

    @Test
    void readersRacingWritersAndFlushesGetTheRightAnswerOrNone() throws Exception {
        AnswerTable table = new AnswerTable(64, 4096, 3, new LongAdder(), new LongAdder(), 100);
        AtomicLong hits = new AtomicLong();
        AtomicLong removed = new AtomicLong();
        AtomicLong hitsAtFlush = new AtomicLong();
        race(4, (me, i, q, a, random) -> {
            if (me == 0) {
                build(q, i, random.nextInt(8), a);
                table.put(me, q.key, a);
            } else if (me == 3) {
                if (hits.get() > hitsAtFlush.get()) { // a flush once readers found something since the last: they keep finding
                    hitsAtFlush.set(hits.get());
                    removed.addAndGet(table.remove(random.nextInt(10) == 0 ? AnswerTable.KeyFilter.ALL : flushOf(i)));
                }
            } else if (table.find(q.key, a, me, 0)) { // loop 1's and 2's rings take the moves
                assertEquals(address(i), served(a, q));
                hits.incrementAndGet();
            }
        });
        assertTrue(hits.get() > 1000, hits.get() + " hits");
        assertTrue(removed.get() > 100, removed.get() + " removed");
    }

    @Test
    void aReaderRacingWritersOverATinyRingGetsTheRightAnswerOrNone() throws Exception {
        AnswerTable table = new AnswerTable(64, 4096, 4, new LongAdder(), new LongAdder(), 100);
        AtomicLong hits = new AtomicLong();
        race(4, (me, i, q, a, random) -> {
            if (me < 2) {
                build(q, i, random.nextInt(8), a);
                table.put(me, q.key, a);
            } else if (table.find(q.key, a, me, 0)) {
                assertEquals(address(i), served(a, q));
                hits.incrementAndGet();
            }
        });
        assertTrue(hits.get() > 1000, hits.get() + " hits");
    }

    /** Allocated bytes of this thread, as the JVM counts them. */
    private static long allocated() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }

    @Test
    void aLookupAndAStoreAllocateNothing() throws Exception {
        AnswerTable table = new AnswerTable(100_000, 1 << 24, 1, new LongAdder(), new LongAdder(), 100);
        CachedAnswer a = new CachedAnswer();
        List<Asked> asked = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            asked.add(new Asked(i));
            build(asked.get(i), i, 0, a);
            table.put(0, asked.get(i).key, a);
        }
        for (int round = 0; round < 3; round++) { // compiled before it is measured
            for (Asked q : asked) {
                if (table.find(q.key, a, 0, 0)) {
                    table.put(0, q.key, a);
                }
            }
        }
        long before = allocated();
        int found = 0;
        for (Asked q : asked) {
            if (table.find(q.key, a, 0, 0)) {
                found++;
                table.put(0, q.key, a);
            }
        }
        long bytes = allocated() - before;
        assertEquals(10_000, found, "two buckets a name: 10,000 names fit in 25,000 buckets of four");
        assertTrue(bytes < 10_000, "allocated " + bytes + " bytes in 10,000 lookups and 10,000 stores");
    }
}
