package io.sluice.config;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** How durations are written everywhere, flags, the file and the load tool: {@code 500ms}, {@code 2s}, {@code 1m}, {@code 1h}. */
public final class Durations {
    private Durations() {
    }

    private static final Pattern DURATION = Pattern.compile("(\\d{1,9})(ms|s|m|h)");
    /** The longest duration taken: ten years, far from where nanoseconds overflow a long (292 years). */
    static final Duration MAX = Duration.ofHours(87_600);

    public static Duration parse(String text) throws ConfigException {
        Matcher m = DURATION.matcher(text.trim());
        if (!m.matches()) {
            throw new ConfigException("invalid duration '" + text + "' (write it like 500ms, 2s, 1m or 1h)");
        }
        long n = Long.parseLong(m.group(1)); // at most nine digits
        Duration d = switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            default -> Duration.ofHours(n);
        };
        if (d.compareTo(MAX) > 0) {
            throw new ConfigException("duration '" + text + "' is longer than ten years (87600h)");
        }
        return d;
    }

    /** The shortest way to write {@code d} back: {@code 1s}, {@code 500ms}, {@code 2m}. */
    public static String text(Duration d) {
        long ms = d.toMillis();
        if (ms % 3_600_000 == 0) {
            return ms / 3_600_000 + "h";
        }
        if (ms % 60_000 == 0) {
            return ms / 60_000 + "m";
        }
        return ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
    }
}
