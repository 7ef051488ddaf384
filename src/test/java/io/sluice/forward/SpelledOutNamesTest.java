package io.sluice.forward;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.testing.Await;
import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Message;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * An upstream that spells its owner names out instead of pointing them at the question writes
 * them in the random case sluice sent (randomize-case): the client gets its own case back there
 * too, relayed and from the cache.
 */
class SpelledOutNamesTest {

    /** A reply to {@code query} with one A record whose owner name is the question's, spelled out. */
    private static byte[] uncompressedAnswer(byte[] query) {
        int nameEnd = 12;
        while (query[nameEnd] != 0) {
            nameEnd += 1 + query[nameEnd];
        }
        nameEnd++;
        ByteArrayOutputStream r = new ByteArrayOutputStream();
        r.write(query, 0, 2); // ID
        r.writeBytes(new byte[] {(byte) 0x81, (byte) 0x80, 0, 1, 0, 1, 0, 0, 0, 0});
        r.write(query, 12, nameEnd + 4 - 12); // the question as received
        r.write(query, 12, nameEnd - 12); // the owner, spelled out in the case received
        r.writeBytes(new byte[] {0, 1, 0, 1, 0, 0, 1, 44, 0, 4, (byte) 192, 0, 2, 7});
        return r.toByteArray();
    }

    @Test
    void theClientsCaseComesBackInOwnerNamesToo() throws Exception {
        ExecutorService client = Executors.newSingleThreadExecutor();
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), "cache.size", "1000", "timeout", "5s")) {
            up.mode(TestUpstream.Mode.SILENT);
            Future<byte[]> answer = client.submit(() -> Dns.udp(s.address(), Dns.query(1, "WwW.Example.COM.", Type.A)));
            Await.until("the query forwarded", () -> up.lastQuery() != null);
            up.sendToLastSender(uncompressedAnswer(up.lastQuery()));
            Message relayed = Dns.parse(answer.get());
            assertEquals("WwW.Example.COM.", relayed.getSection(Section.ANSWER).get(0).getName().toString(),
                    "not the case sluice sent upstream");
            Message cached = Dns.parse(Dns.udp(s.address(), Dns.query(2, "www.EXAMPLE.com.", Type.A)));
            assertEquals(1, up.udpQueries(), "the second from the cache");
            assertEquals("www.EXAMPLE.com.", cached.getSection(Section.ANSWER).get(0).getName().toString(),
                    "not the case of the client the answer was kept for");
            assertEquals("192.0.2.7", cached.getSection(Section.ANSWER).get(0).rdataToString());
        } finally {
            client.shutdownNow();
        }
    }
}
