package io.sluice.cookie;

import io.netty.channel.EventLoop;
import io.sluice.config.ConfigException;
import io.sluice.config.Reloadable;
import io.sluice.config.Setting;
import io.sluice.config.Settings;
import io.sluice.metrics.Registry;
import io.sluice.pipeline.Module;
import io.sluice.pipeline.Stage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * DNS cookies as a module: the server cookies' secret, from {@code cookies.secret-file} or random
 * per start, and each loop's {@link CookieStage}. A reload reads the file again; a new secret
 * replaces the one in force, whose cookies stay valid for an hour.
 */
public final class Cookies implements Module, Reloadable {
    private final ServerCookies cookies;
    private final Path secretFile;
    private final int maxUdpSize;
    private final LongSupplier clock;
    private final CookieMeters meters;
    /** The secret the last reload's check read, for its apply. */
    private byte[] secretRead;
    private boolean replaced;

    private Cookies(ServerCookies cookies, Path secretFile, int maxUdpSize, LongSupplier clock, CookieMeters meters) {
        this.cookies = cookies;
        this.secretFile = secretFile;
        this.maxUdpSize = maxUdpSize;
        this.clock = clock;
        this.meters = meters;
    }

    /**
     * The module {@code settings} ask for, or null when cookies are off.
     *
     * @param clock epoch nanoseconds, when a replaced secret was replaced
     * @throws ConfigException when the secret file cannot be read or holds no secret
     */
    public static Cookies start(Settings settings, LongSupplier clock, Registry meters) throws ConfigException {
        if (!settings.value(CookieSettings.ENABLED)) {
            return null;
        }
        Path file = settings.value(CookieSettings.SECRET_FILE);
        byte[] secret;
        if (file == null) {
            secret = new byte[ServerCookies.SECRET_BYTES];
            new SecureRandom().nextBytes(secret);
        } else {
            secret = read(file);
        }
        return new Cookies(new ServerCookies(secret), file, settings.maxUdpSize(), clock, new CookieMeters(meters));
    }

    /** What {@code --check-config} checks beyond the settings: the secret file holds a secret. */
    public static void checkAtStart(Settings settings) throws ConfigException {
        Path file = settings.value(CookieSettings.SECRET_FILE);
        if (settings.value(CookieSettings.ENABLED) && file != null) {
            read(file);
        }
    }

    /**
     * The secret in {@code file}: 32 hex digits, spaces and lines starting with {@code #} aside.
     */
    static byte[] read(Path file) throws ConfigException {
        String where = CookieSettings.SECRET_FILE.key() + ": " + file;
        StringBuilder hex = new StringBuilder();
        try {
            for (String line : Files.readAllLines(file, StandardCharsets.US_ASCII)) {
                if (!line.strip().startsWith("#")) {
                    hex.append(line.replaceAll("\\s", ""));
                }
            }
        } catch (IOException e) {
            throw new ConfigException(where + ": cannot read it (" + e.getMessage() + ")");
        }
        if (hex.length() != 2 * ServerCookies.SECRET_BYTES || !hex.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
            throw new ConfigException(where + ": needs the secret as " + 2 * ServerCookies.SECRET_BYTES
                    + " hex digits (16 octets), found " + hex.length() + " characters");
        }
        return HexFormat.of().parseHex(hex);
    }

    @Override
    public Stage stage(EventLoop loop) {
        return new CookieStage(cookies, maxUdpSize, meters);
    }

    /** For the startup line. */
    public String describe() {
        return "cookies on (" + (secretFile == null ? "a random secret" : "secret " + secretFile) + ")";
    }

    /** The file is read again at each reload, whatever keys changed; its path takes a restart. */
    @Override
    public Setting.Applied part() {
        return Setting.Applied.RESTART;
    }

    @Override
    public boolean takes(Set<Setting.Applied> changed) {
        return secretFile != null;
    }

    @Override
    public void check(Settings next) throws ConfigException {
        secretRead = read(secretFile);
    }

    @Override
    public void apply(Settings next) {
        replaced = cookies.replaceSecret(secretRead, clock.getAsLong());
    }

    @Override
    public List<String> report() {
        return List.of(CookieSettings.SECRET_FILE.key() + (replaced
                ? ": a new secret; the one it replaced is accepted for an hour" : ": read again, the same secret"));
    }
}
