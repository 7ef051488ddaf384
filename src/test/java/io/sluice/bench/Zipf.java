package io.sluice.bench;

/** Zipf's law over n ranks, drawn by inverting its cumulative distribution; rank 0 is the most likely. */
final class Zipf {
    private final double[] cumulative;

    Zipf(int n, double exponent) {
        cumulative = new double[n];
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += 1 / Math.pow(i + 1, exponent);
            cumulative[i] = sum;
        }
        for (int i = 0; i < n; i++) {
            cumulative[i] /= sum;
        }
    }

    /** The rank {@code u}, uniform in [0, 1), falls on: the first whose cumulative share reaches it. */
    int rank(double u) {
        int lo = 0;
        int hi = cumulative.length - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (cumulative[mid] < u) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
