package io.sluice.forward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.testing.Dns;
import io.sluice.testing.SluiceProcess;
import io.sluice.testing.TestUpstream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/**
 * Where native epoll is missing, sluice runs on Netty's NIO transport. NIO reads a batch of
 * datagrams before it hands any to the pipeline, so upstream replies must not share one read
 * buffer there: they did, and every forwarded query ended in SERVFAIL.
 */
class NioTransportTest {
    @TempDir
    Path dir;

    @Test
    void forwardsOverNioWhenNativeEpollIsOff() throws Exception {
        try (TestUpstream up = new TestUpstream();
             // serve() itself waits for a UDP query answered through the upstream
             SluiceProcess s = SluiceProcess.serve(dir.resolve("nio.log"),
                     List.of("-Dio.netty.transport.noNative=true"), "--upstream", up.hostPort())) {
            assertTrue(Files.readString(s.log()).contains("transport nio"), Files.readString(s.log()));

            int n = 200;
            up.holdUntil(n); // the replies come back in one burst: several in each read
            Concurrent.Result r = Concurrent.udp(s.at(), n, 4, up::udpQueries);
            assertEquals(n, r.answered(), r.toString());
            assertEquals(0, r.wrongAnswers(), r.toString());
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.tcp(s.at(), Dns.query(1, "tcp.example.", Type.A))));
        }
    }
}
