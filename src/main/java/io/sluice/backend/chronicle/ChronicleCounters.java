package io.sluice.backend.chronicle;

import io.netty.util.concurrent.FastThreadLocal;
import io.sluice.config.ConfigException;
import io.sluice.domain.DomainKey;
import io.sluice.domain.DomainProbe;
import io.sluice.limit.Algorithm;
import io.sluice.limit.CounterStore;
import io.sluice.limit.CounterTable;
import io.sluice.limit.Policy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import net.openhft.chronicle.core.values.LongValue;
import net.openhft.chronicle.hash.impl.VanillaChronicleHash;
import net.openhft.chronicle.map.ChronicleMap;
import net.openhft.chronicle.map.ExternalMapQueryContext;
import net.openhft.chronicle.map.MapEntry;
import net.openhft.chronicle.values.Values;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The words in a persisted Chronicle Map, keyed by the domain's wire bytes: a restart keeps the
 * counts of the current window, and every sluice on the host that opens the same file shares them.
 *
 * <p>Chronicle picks an entry's segment from an unseeded hash of its key, and a full segment fails
 * every decision in it (allowed, and counted): a client that chose names to fill the segment of a
 * domain would lift that domain's limit. So each key starts with the file's salt, eight random
 * octets written once into the file under a key no domain can have, which every process that
 * opens the file reads back.
 *
 * <p>Each decision reads and writes the word under the entry's segment update lock
 * ({@code queryContext} + {@code updateLock}): Chronicle's locks work across processes, and holding
 * the lock means no other process can remove the entry and reuse its memory under us. A reference
 * into the entry kept across decisions would save the lookup and the lock, which make a decision
 * here dearer than one in memory (docs/benchmarks.md, "Backends"), but could, after another
 * process's janitor removed the entry, land a compare-and-set on a different domain's word.
 */
public final class ChronicleCounters implements CounterStore {
    private static final Logger log = LoggerFactory.getLogger(ChronicleCounters.class);
    /** Most registrable domains are 8 to 20 wire bytes; Chronicle sizes its segments from this. */
    private static final int AVERAGE_KEY_CHARS = 16 + Long.BYTES;
    /** Where the salt is kept: a char past 0xFF, which no key of wire chars has. */
    public static final String SALT_KEY = "\u0100salt";

    private final ChronicleMap<CharSequence, LongValue> map;
    /** The salt, as the eight chars that start every domain's key. */
    private final String salt;
    private final Path file;
    private final Function<DomainKey, Policy> policies;
    /** Decisions that failed inside Chronicle (a full segment): counted, and the query allowed. */
    private final LongAdder failures = new LongAdder();
    private final FastThreadLocal<Scratch> scratch = new FastThreadLocal<>() {
        @Override
        protected Scratch initialValue() {
            return new Scratch();
        }
    };

    /** Per thread: the key being looked up and a value to copy words through, reused per query. */
    private final class Scratch {
        final StringBuilder key = new StringBuilder(40);
        final LongValue value = Values.newHeapInstance(LongValue.class);

        /** Puts {@code domain}'s file key in {@link #key}: the salt, then the domain's wire chars. */
        Scratch keyOf(DomainProbe domain) {
            key.setLength(0);
            key.append(salt);
            domain.appendWireChars(key);
            return this;
        }
    }

    private ChronicleCounters(ChronicleMap<CharSequence, LongValue> map, Path file,
                              Function<DomainKey, Policy> policies) {
        this.map = map;
        this.file = file;
        this.policies = policies;
        this.salt = saltOf(map, file);
    }

    /**
     * The file's salt, written now if it has none (each process puts one if absent, then all read
     * back the one that stayed). Entries whose keys lack it come from a sluice that salts none:
     * counts of windows now ending, they are dropped, here and by the janitor.
     */
    private static String saltOf(ChronicleMap<CharSequence, LongValue> map, Path file) {
        LongValue fresh = Values.newHeapInstance(LongValue.class);
        fresh.setValue(new SecureRandom().nextLong());
        LongValue kept;
        while ((kept = map.get(SALT_KEY)) == null) {
            map.putIfAbsent(SALT_KEY, fresh); // loops only if another removed it in between
        }
        long v = kept.getValue();
        StringBuilder chars = new StringBuilder(Long.BYTES);
        for (int i = 0; i < Long.BYTES; i++) {
            chars.append((char) (v >>> (8 * i) & 0xFF));
        }
        String salt = chars.toString();
        List<String> unsalted = new ArrayList<>();
        map.forEachEntry(e -> {
            String key = e.key().get().toString();
            if (!key.equals(SALT_KEY) && !key.startsWith(salt)) {
                unsalted.add(key);
            }
        });
        if (!unsalted.isEmpty()) {
            log.info("state file {} holds {} entries of an earlier sluice, whose keys had no salt: dropping them "
                    + "(counts of current windows)", file, unsalted.size());
            unsalted.forEach(map::remove);
        }
        return salt;
    }

    /**
     * Opens {@code file}, or creates it sized for {@code maxDomains}.
     *
     * @param policies the budget of a domain read back from the file, for pruning
     * @param reset    when the file cannot be read, move it aside and create a fresh one
     * @throws ConfigException when the file cannot be opened or created (and {@code reset} is false
     *                         or did not help)
     */
    public static ChronicleCounters open(Path file, int maxDomains, boolean reset,
                                         Function<DomainKey, Policy> policies) throws ConfigException {
        try {
            return new ChronicleCounters(create(file, maxDomains), file, policies);
        } catch (IOException | RuntimeException e) {
            if (!reset || !Files.exists(file)) {
                throw new ConfigException("state-file: " + file + ": cannot open it as a counter map ("
                        + reason(e) + "); remove it, or start with --reset-corrupt-state-file");
            }
            Path aside = file.resolveSibling(file.getFileName() + ".corrupt-" + System.currentTimeMillis());
            try {
                Files.move(file, aside);
                log.warn("state file {} could not be read ({}): moved to {}, starting with a fresh one",
                        file, reason(e), aside);
                return new ChronicleCounters(create(file, maxDomains), file, policies);
            } catch (IOException | RuntimeException again) {
                throw new ConfigException("state-file: " + file + ": " + reason(again));
            }
        }
    }

    private static ChronicleMap<CharSequence, LongValue> create(Path file, int maxDomains) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null && !Files.isDirectory(parent)) {
            throw new IOException("no directory " + parent);
        }
        ChronicleMap<CharSequence, LongValue> map = ChronicleMap.of(CharSequence.class, LongValue.class)
                .name("sluice-counters")
                .entries(maxDomains)
                .averageKeySize(AVERAGE_KEY_CHARS)
                // With entry checksums (the default for files), Chronicle Map 2026.1 writes a
                // replaced LongValue's checksum over the start of the next entry, which leaves a
                // phantom entry and an iteration that throws. The file is a cache of the current
                // window, never recovered from, so it loses nothing without them.
                .checksumEntries(false)
                .createPersistedTo(file.toFile());
        // An existing file keeps the settings it was made with.
        if (map instanceof VanillaChronicleHash<?, ?, ?, ?> h && h.checksumEntries) {
            map.close();
            throw new IOException("made by an earlier sluice with entry checksums, which corrupt it as it is used");
        }
        return map;
    }

    private static String reason(Throwable e) {
        String m = e.getMessage();
        return e.getClass().getSimpleName() + (m == null ? "" : ": " + m.lines().findFirst().orElse(""));
    }

    /**
     * Decides in the file, under the entry's lock, then mirrors the word into {@code slot}, which
     * the janitor retires by it like a word in memory: a slot retired while another process
     * counts on leaves the entry, and the domain's next query here reads it again.
     */
    @Override
    public int acquire(CounterTable table, int slot, DomainProbe domain, Policy budget, Algorithm algorithm,
                       long now) {
        Scratch s = scratch.get().keyOf(domain);
        long fp = CounterTable.fingerprintOf(table.key(slot));
        try (ExternalMapQueryContext<CharSequence, LongValue, ?> q = map.queryContext(s.key)) {
            q.updateLock().lock();
            MapEntry<CharSequence, LongValue> entry = q.entry();
            long word = entry == null ? 0 : entry.value().getUsing(s.value).getValue();
            long next = algorithm.acquire(word, budget, now);
            if (next == Algorithm.REFUSE) {
                mirror(table, slot, fp, word);
                return REFUSED;
            }
            s.value.setValue(next);
            if (entry == null) {
                q.insert(q.absentEntry(), q.wrapValueAsData(s.value));
            } else {
                q.replaceValue(entry, q.wrapValueAsData(s.value));
            }
            mirror(table, slot, fp, next);
            return ALLOWED;
        } catch (RuntimeException e) {
            // A full segment (more domains than the file was sized for), or a lock left taken by a
            // process killed mid-decision, which Chronicle gives up on after a while: allowing
            // keeps traffic flowing, and the metric says so; nothing is logged per query.
            failures.increment();
            return ALLOWED;
        }
    }

    /** Keeps {@code slot}'s word at the file's, unless the janitor retired the slot. */
    private static void mirror(CounterTable table, int slot, long fp, long word) {
        long w;
        while (Algorithm.isWord(word) && (w = table.word(slot)) != CounterTable.DEAD && w != word
                && !table.compareAndSetWord(slot, fp, w, word)) {
            Thread.onSpinWait(); // another loop mirrored meanwhile; either word tells the janitor, and the file decides
        }
    }

    /**
     * Removes entries whose windows have ended, whoever wrote them: the idle ones are listed
     * first, then each is checked again and removed under its lock, since another process may
     * have counted a query in between (and removing inside Chronicle's own iteration can leave
     * entries behind).
     */
    @Override
    public int prune(Algorithm algorithm, long now) {
        List<String> idle = new ArrayList<>();
        map.forEachEntry(e -> {
            String key = e.key().get().toString();
            if (!key.equals(SALT_KEY) && isIdle(key, e.value().get().getValue(), algorithm, now)) {
                idle.add(key);
            }
        });
        int removed = 0;
        for (String key : idle) {
            try (ExternalMapQueryContext<CharSequence, LongValue, ?> q = map.queryContext(key)) {
                q.updateLock().lock();
                MapEntry<CharSequence, LongValue> entry = q.entry();
                if (entry != null && isIdle(key, entry.value().get().getValue(), algorithm, now)) {
                    q.remove(entry);
                    removed++;
                }
            }
        }
        return removed;
    }

    /** Whether the entry at {@code key} may go: its window has ended, or it is not salted as this file's keys are. */
    private boolean isIdle(String key, long word, Algorithm algorithm, long now) {
        if (!key.startsWith(salt)) {
            return true; // an earlier sluice's, still writing beside this one
        }
        Policy p = policies.apply(DomainKey.fromWireChars(key.substring(salt.length())));
        return p == Policy.UNLIMITED || algorithm.idle(word, p, now);
    }

    @Override
    public long failures() {
        return failures.sum();
    }

    @Override
    public long size() {
        return Math.max(0, map.longSize() - 1); // less the salt's entry
    }

    @Override
    public String describe() {
        return "chronicle " + file + " (" + size() + " domains kept)";
    }

    @Override
    public void close() {
        map.close();
    }
}
