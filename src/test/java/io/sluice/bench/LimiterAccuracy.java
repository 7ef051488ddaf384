package io.sluice.bench;

import io.sluice.config.LimitSettings;
import io.sluice.domain.DomainProbe;
import io.sluice.limit.Decide;
import io.sluice.limit.DomainLimiter;
import io.sluice.limit.Policy;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * How exactly the limiter admits, against an exact model of each algorithm fed the same queries:
 * Zipf-distributed domains (a few very busy, a long tail), Poisson arrivals, on a clock moved by
 * hand. The models: a fixed window counts up to the limit in each window; a sliding window allows a
 * query when fewer than the limit were allowed in the window that ends at it (a log of times, which
 * sluice approximates with two counters); a token bucket holds the limit's worth of tokens (burst
 * 0), refilled evenly. Per domain, what sluice allowed beyond the model's count is over-admission,
 * what it refused that the model allowed is under-admission, both as shares of what the model
 * allowed.
 *
 * <pre>java -cp target/test-classes:target/classes:$(cat target/test.classpath) io.sluice.bench.LimiterAccuracy [DOMAINS [QPS [SECONDS [LIMIT]]]]</pre>
 */
public final class LimiterAccuracy {
    /** Zipf's exponent: the busiest domain gets about a tenth of the queries of 10,000 domains. */
    static final double ZIPF_EXPONENT = 1.0;
    private static final long SECOND = 1_000_000_000L;

    /** What one run found: queries asked, allowed by the model, over- and under-admitted by sluice. */
    record Result(LimitSettings.Algorithm algorithm, long queries, long modelAllowed, long over, long under) {
        double overShare() {
            return (double) over / modelAllowed;
        }

        double underShare() {
            return (double) under / modelAllowed;
        }

        @Override
        public String toString() {
            return String.format("%s: %,d queries, %,d allowed by the model, over-admitted %,d (%.4f%%), "
                    + "under-admitted %,d (%.4f%%)", algorithm, queries, modelAllowed, over, 100 * overShare(), under,
                    100 * underShare());
        }
    }

    public static void main(String[] args) {
        int domains = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        double qps = args.length > 1 ? Double.parseDouble(args[1]) : 100_000;
        int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 20;
        int limit = args.length > 3 ? Integer.parseInt(args[3]) : 100;
        System.out.printf("%,d domains (Zipf %.1f), %,.0f queries a second for %d s, %d queries per 1s each%n",
                domains, ZIPF_EXPONENT, qps, seconds, limit);
        for (LimitSettings.Algorithm a : LimitSettings.Algorithm.values()) {
            System.out.println(measure(a, domains, qps, seconds, limit, 42));
        }
    }

    static Result measure(LimitSettings.Algorithm algorithm, int domains, double qps, int seconds, int limit, long seed) {
        long[] now = {1_800_000_000L * SECOND}; // a window edge, as ManualClock's start
        Policy policy = Policy.of(limit, Duration.ofSeconds(1), 0);
        DomainLimiter limiter = new DomainLimiter(algorithm, policy, Map.of(), 2 * domains, () -> now[0]);
        Model model = switch (algorithm) {
            case FIXED_WINDOW -> new FixedWindowModel(domains, limit);
            case SLIDING_WINDOW -> new SlidingLogModel(domains, limit);
            case TOKEN_BUCKET -> new TokenBucketModel(domains, limit, now[0]);
        };
        DomainProbe[] names = new DomainProbe[domains];
        for (int d = 0; d < domains; d++) {
            names[d] = DomainProbe.of("d" + d + ".example");
        }
        Zipf zipf = new Zipf(domains, ZIPF_EXPONENT);
        long[] sluiceAllowed = new long[domains];
        long[] modelAllowed = new long[domains];
        SplittableRandom random = new SplittableRandom(seed);
        long end = now[0] + seconds * SECOND;
        long queries = 0;
        while (true) {
            now[0] += (long) (-Math.log(1 - random.nextDouble()) / qps * SECOND);
            if (now[0] >= end) {
                break;
            }
            int d = zipf.rank(random.nextDouble());
            queries++;
            if (Decide.allowed(limiter, names[d])) {
                sluiceAllowed[d]++;
            }
            if (model.allow(d, now[0])) {
                modelAllowed[d]++;
            }
        }
        long allowed = 0;
        long over = 0;
        long under = 0;
        for (int d = 0; d < domains; d++) {
            allowed += modelAllowed[d];
            over += Math.max(0, sluiceAllowed[d] - modelAllowed[d]);
            under += Math.max(0, modelAllowed[d] - sluiceAllowed[d]);
        }
        return new Result(algorithm, queries, allowed, over, under);
    }

    private interface Model {
        boolean allow(int domain, long now);
    }

    /** Up to {@code limit} queries in each window of a second, windows on the epoch's seconds. */
    private static final class FixedWindowModel implements Model {
        private final long[] window;
        private final int[] count;
        private final int limit;

        FixedWindowModel(int domains, int limit) {
            this.window = new long[domains];
            this.count = new int[domains];
            this.limit = limit;
        }

        @Override
        public boolean allow(int d, long now) {
            long w = now / SECOND;
            if (window[d] != w) {
                window[d] = w;
                count[d] = 0;
            }
            return count[d] < limit && ++count[d] > 0;
        }
    }

    /** Fewer than {@code limit} allowed in the second that ends now: the times of the last {@code limit} kept. */
    private static final class SlidingLogModel implements Model {
        private final long[][] allowedAt;
        private final int[] next;
        private final int limit;

        SlidingLogModel(int domains, int limit) {
            this.allowedAt = new long[domains][];
            this.next = new int[domains];
            this.limit = limit;
        }

        @Override
        public boolean allow(int d, long now) {
            if (allowedAt[d] == null) {
                allowedAt[d] = new long[limit];
                Arrays.fill(allowedAt[d], Long.MIN_VALUE / 2);
            }
            long[] log = allowedAt[d];
            if (log[next[d]] > now - SECOND) { // the oldest of the last limit allowed is inside the window
                return false;
            }
            log[next[d]] = now;
            next[d] = (next[d] + 1) % limit;
            return true;
        }
    }

    /** {@code limit} tokens at most, refilled at {@code limit} a second, one a query. */
    private static final class TokenBucketModel implements Model {
        private final double[] tokens;
        private final long[] at;
        private final int limit;

        TokenBucketModel(int domains, int limit, long start) {
            this.tokens = new double[domains];
            this.at = new long[domains];
            this.limit = limit;
            Arrays.fill(tokens, limit);
            Arrays.fill(at, start);
        }

        @Override
        public boolean allow(int d, long now) {
            tokens[d] = Math.min(limit, tokens[d] + (double) (now - at[d]) * limit / SECOND);
            at[d] = now;
            if (tokens[d] < 1) {
                return false;
            }
            tokens[d] -= 1;
            return true;
        }
    }
}
