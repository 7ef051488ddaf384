package io.sluice.forward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.metrics.Registry;
import io.sluice.testing.Dns;
import io.sluice.testing.RecordingRoute;
import io.sluice.wire.QueryView;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Type;

/**
 * The waiters' bookkeeping of {@link Coalescing}, against a map of what should be: random leaders
 * begin and end, random queries join them or lead, and each leader hands back exactly the queries
 * that joined it. Removal shifts later entries of a probe run back, which this exercises with
 * many keys in a table a few times their number.
 */
class CoalescingTableTest {
    private final RecordingRoute client = RecordingRoute.datagram(new InetSocketAddress("192.0.2.7", 5353));
    private final ForwardMeters meters = new ForwardMeters(new Registry(), List.of());

    @Test
    void eachLeaderHandsBackExactlyTheQueriesThatJoinedIt() {
        int names = 3000;
        int max = 5;
        Coalescing table = new Coalescing(max, 1232, meters);
        Random random = new Random(58);
        Map<Integer, PendingQuery> leading = new HashMap<>(); // name -> the leader a query of it joins
        Map<PendingQuery, List<Integer>> joined = new HashMap<>(); // every leader, full ones too -> the IDs joined
        List<PendingQuery> live = new ArrayList<>();
        List<PendingQuery> free = new ArrayList<>();
        for (int i = 0; i < 2 * names; i++) {
            free.add(new PendingQuery(i, 0, 0));
        }
        int id = 0;
        for (int step = 0; step < 200_000; step++) {
            if (!live.isEmpty() && random.nextInt(3) == 0) {
                PendingQuery leader = live.remove(random.nextInt(live.size()));
                Coalescing.Waiter w = table.end(leader);
                List<Integer> ids = new ArrayList<>();
                for (; w != null; w = table.answered(w)) {
                    ids.add(w.query.getUnsignedShort(0));
                }
                Collections.reverse(ids); // handed back last joined first
                assertEquals(joined.remove(leader), ids, "the queries joined, in order");
                leading.values().remove(leader);
                free.add(leader);
                continue;
            }
            int name = random.nextInt(names);
            PendingQuery leader = leading.get(name);
            int queryId = id++ & 0xFFFF;
            ByteBuf query = Unpooled.wrappedBuffer(Dns.query(queryId, "n" + name + ".example.", Type.A));
            QueryView view = new QueryView();
            view.read(query);
            boolean full = leader != null && joined.get(leader).size() == max;
            boolean joins = table.join(query, view, client, 0, null);
            assertEquals(leader != null && !full, joins, "name " + name);
            if (joins) {
                joined.get(leader).add(queryId);
            } else {
                PendingQuery q = free.remove(free.size() - 1);
                table.lead(q); // in the full leader's place, if there is one
                leading.put(name, q);
                joined.put(q, new ArrayList<>());
                live.add(q);
            }
            int waiting = joined.values().stream().mapToInt(List::size).sum();
            assertEquals(waiting, table.waiting());
        }
        for (PendingQuery q : live) {
            Coalescing.Waiter w = table.end(q);
            while (w != null) {
                w = table.answered(w);
            }
        }
        assertEquals(0, table.waiting());
    }

    @Test
    void aLeaderThatEndedIsJoinedByNothingAndNothingLeadsTwice() {
        Coalescing table = new Coalescing(100, 1232, meters);
        PendingQuery first = new PendingQuery(0, 0, 0);
        ByteBuf query = Unpooled.wrappedBuffer(Dns.query(1, "once.example.", Type.A));
        QueryView view = new QueryView();
        view.read(query);
        assertFalse(table.join(query, view, client, 0, null));
        table.lead(first);
        assertNull(table.end(first));
        assertNull(table.end(first), "ended once: a second end finds nothing");
        assertFalse(table.join(query, view, client, 0, null), "nothing leads the name now");
        PendingQuery second = new PendingQuery(1, 0, 0);
        table.lead(second);
        assertTrue(table.join(query, view, client, 0, null));
        Coalescing.Waiter w = table.end(second);
        assertEquals(1, w.query.getUnsignedShort(0));
        assertNull(table.answered(w));
    }

    @Test
    void withCoalescingOffNothingJoinsOrLeads() {
        Coalescing table = new Coalescing(0, 1232, meters);
        ByteBuf query = Unpooled.wrappedBuffer(Dns.query(1, "off.example.", Type.A));
        QueryView view = new QueryView();
        view.read(query);
        PendingQuery q = new PendingQuery(0, 0, 0);
        assertFalse(table.join(query, view, client, 0, null));
        table.lead(q);
        assertFalse(table.join(query, view, client, 0, null));
        assertNull(table.end(q));
    }
}
