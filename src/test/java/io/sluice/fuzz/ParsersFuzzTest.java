package io.sluice.fuzz;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.sluice.cache.AnswerCache;
import io.sluice.cache.CacheStage;
import io.sluice.config.CacheSettings;
import io.sluice.config.ConfigException;
import io.sluice.config.ConfigFile;
import io.sluice.config.Settings;
import io.sluice.domain.DomainProbe;
import io.sluice.domain.RegistrableDomains;
import io.sluice.pipeline.Answer;
import io.sluice.pipeline.Query;
import io.sluice.pipeline.Route;
import io.sluice.transport.ProxyHeader;
import io.sluice.wire.Answers;
import io.sluice.wire.QueryView;
import io.sluice.metrics.Registry;
import io.sluice.wire.Names;
import io.sluice.wire.QueryEdns;
import io.sluice.wire.QuestionCase;
import io.sluice.wire.Replies;
import io.sluice.wire.Wire;
import io.sluice.wire.ZoneTransfer;

/**
 * The parsers of untrusted bytes, fuzzed with Jazzer. In {@code mvn verify} each target runs its
 * committed inputs ({@code src/test/resources/io/sluice/fuzz/ParsersFuzzTestInputs/<target>});
 * {@code JAZZER_FUZZ=1} fuzzes one (docs/fuzzing.md). Every target asserts what must hold for any
 * input, and any exception other than the ones a parser documents is a finding.
 */
class ParsersFuzzTest {
    private static final RegistrableDomains DOMAINS = RegistrableDomains.fromGuava();

    /** The query reader and name walk, and the answers built from what it read: never larger than allowed. */
    @FuzzTest(maxExecutions = 10_000_000, maxDuration = "15m")
    void queryReaderAndAnswers(byte[] data) {
        if (data == null) {
            return; // Jazzer's mutator may pass null for an object parameter
        }
        ByteBuf query = Unpooled.wrappedBuffer(data);
        QueryView view = new QueryView();
        QueryView.Check check = view.read(query);
        if (check == QueryView.Check.FORMERR || check == QueryView.Check.NOTIMP) {
            ByteBuf a = Answers.headerOnly(UnpooledByteBufAllocator.DEFAULT, query, view, Wire.RCODE_FORMERR);
            try {
                assertTrue(a.readableBytes() <= Math.max(Wire.HEADER_BYTES, data.length), "no amplification");
            } finally {
                a.release();
            }
        } else if (check == QueryView.Check.QUERY) {
            byte[] text = Answers.text("sluice: fuzz");
            ByteBuf a = Answers.withQuestion(UnpooledByteBufAllocator.DEFAULT, query, view, Wire.FLAG_RA,
                    Wire.RCODE_REFUSED, Answers.EDE_OTHER, text);
            try {
                assertTrue(a.readableBytes() <= data.length + 6 + text.length, "no amplification beyond the EDE");
            } finally {
                a.release();
            }
            if (view.hasQuestion()) {
                // name reduction: any name the reader passes must reduce without throwing
                DOMAINS.reduce(query, view.nameStart(), view.nameEnd(), new DomainProbe());
            }
        }
    }

    /** The reply check and the zone transfer's end, on a fuzzed query and a fuzzed reply. */
    @FuzzTest(maxExecutions = 10_000_000, maxDuration = "15m")
    void replyCheck(FuzzedDataProvider data) {
        byte[] q = data.consumeBytes(300);
        byte[] r = data.consumeRemainingAsBytes();
        ByteBuf query = Unpooled.wrappedBuffer(q);
        QueryView view = new QueryView();
        if (view.read(query) != QueryView.Check.QUERY) {
            return;
        }
        ByteBuf reply = Unpooled.wrappedBuffer(r);
        boolean answers = Replies.answers(query, view.base(), view.questionEnd(), reply);
        boolean continues = Replies.continuesTransfer(query, view.base(), view.questionEnd(), reply);
        assertTrue(!answers || continues || (r.length >= 6 && r[4] == 0 && r[5] == 0),
                "a reply that answers also continues a transfer, unless it has no question");
        assertTrue(!Replies.answers(query, view.base(), view.questionEnd(), reply, true) || answers,
                "a reply in the exact case answers in any case");
        if (view.hasQuestion()) {
            // 0x20: scrambling the name changes only its letters' case, and flipping the mask undoes it
            ByteBuf sent = Unpooled.copiedBuffer(q);
            long[] mask = new long[QuestionCase.MASK_WORDS];
            byte[] scratch = new byte[QuestionCase.SCRATCH_BYTES];
            QuestionCase.scramble(sent, view.base(), view.nameEnd(), mask, scratch,
                    new java.util.SplittableRandom(r.length)::nextLong);
            assertTrue(Names.equalIgnoreCase(query, view.base(), view.nameStart(), sent, view.base(), view.nameStart()),
                    "the same name in another case");
            QuestionCase.flip(sent, view.base(), view.nameEnd(), mask, scratch);
            assertTrue(ByteBufUtil.equals(query, sent), "the client's case back");
        }
        if (view.hasQuestion() && ZoneTransfer.isTransfer(view.qtype())) {
            ZoneTransfer t = new ZoneTransfer();
            t.start(query, view);
            t.isLast(reply);
        }
        assertTrue(reply.readerIndex() == 0 && reply.writerIndex() == r.length, "the reply is read in place, untouched");
    }

    /** What the answer cache keeps and serves: never another question, another ID, or past the UDP size. */
    private static final AnswerCache CACHE = new AnswerCache(new CacheSettings(1000, 1 << 20,
            java.time.Duration.ofDays(1), java.time.Duration.ofHours(1), java.time.Duration.ofSeconds(5),
            java.time.Duration.ofDays(1), java.time.Duration.ofSeconds(30), true, false, 100), 1, () -> 0L, 1232, new Registry());
    /** The one loop's side of it: this fuzzer's thread. */
    private static final CacheStage STAGE = CACHE.stage();

    /** The answer cache's reading of a fuzzed reply to a fuzzed query, and the answer it serves from it. */
    @FuzzTest(maxExecutions = 10_000_000, maxDuration = "15m")
    void cacheEntries(FuzzedDataProvider data) {
        byte[] q = data.consumeBytes(300);
        byte[] r = data.consumeRemainingAsBytes();
        ByteBuf query = Unpooled.wrappedBuffer(q);
        QueryView view = new QueryView();
        if (view.read(query) != QueryView.Check.QUERY || !view.hasQuestion()) {
            return;
        }
        ByteBuf reply = Unpooled.wrappedBuffer(r);
        if (!Replies.answers(query, view.base(), view.questionEnd(), reply)) {
            return; // the forwarder offers the cache only replies that passed the check
        }
        CacheStage stage = STAGE;
        stage.answer(new Answer().fill(query, view, Route.nobody(true), Query.NO_NOTE, reply.retain(),
                Answer.Source.UPSTREAM));
        assertTrue(reply.readerIndex() == 0 && reply.writerIndex() == r.length, "the reply is read in place, untouched");
        Answer unanswered = new Answer().fill(query, view, Route.nobody(true), Query.NO_NOTE, Unpooled.buffer(0),
                Answer.Source.NOT_FORWARDED);
        stage.answer(unanswered);
        if (unanswered.source() != Answer.Source.CACHE) {
            return;
        }
        ByteBuf a = unanswered.message();
        byte[] out = ByteBufUtil.getBytes(a);
        assertTrue(out.length >= view.questionEnd() && (out[0] & 0xFF) == (q[0] & 0xFF) && (out[1] & 0xFF) == (q[1] & 0xFF),
                "the client's ID");
        assertTrue(java.util.Arrays.equals(q, Wire.HEADER_BYTES, view.questionEnd(), out, Wire.HEADER_BYTES,
                view.questionEnd()), "the client's question, byte for byte");
        QueryEdns edns = new QueryEdns();
        if (edns.read(query, view)) {
            assertTrue(out.length <= edns.udpPayload(), "within the client's UDP payload size");
        }
    }

    /**
     * The PROXY v2 header reader, as on a trusted proxy's datagrams and connections: never throws;
     * a length it gives lies within the bytes, and the client it names comes from within them.
     */
    @FuzzTest(maxExecutions = 10_000_000, maxDuration = "15m")
    void proxyHeader(byte[] data) {
        if (data == null) {
            return; // Jazzer's mutator may pass null for an object parameter
        }
        ByteBuf in = Unpooled.wrappedBuffer(data);
        int n = ProxyHeader.length(in);
        assertTrue(n == ProxyHeader.INVALID || n == ProxyHeader.INCOMPLETE
                || n >= ProxyHeader.FIXED_BYTES && n <= data.length, "a length within the bytes: " + n);
        if (n > 0) {
            ProxyHeader.source(in);
            assertTrue(in.readerIndex() == 0, "read in place");
        }
    }

    /**
     * The configuration loader: any text is loaded or refused with a ConfigException that names
     * the file, nothing else. Slower than the others (YAML composing, host names looked up).
     */
    @FuzzTest(maxExecutions = 10_000_000, maxDuration = "45m")
    void configLoader(String yaml) {
        if (yaml == null) {
            return; // Jazzer's mutator may pass null for an object parameter
        }
        try {
            Settings.Builder b = new Settings.Builder();
            ConfigFile.apply(yaml, "fuzz.yml", b);
            b.set("upstreams", java.util.List.of("127.0.0.1:53"));
            b.build();
        } catch (ConfigException expected) {
            assertTrue(expected.getMessage().startsWith("fuzz.yml") || expected.getMessage().startsWith("upstreams")
                    || expected.getMessage().startsWith("listen"), "an error names the file: " + expected.getMessage());
        }
    }
}
