package io.sluice.config;

import java.nio.file.Path;

/**
 * dnstap. Documented key by key in {@code conf/sluice.yml}.
 *
 * @param socket    the Frame Streams unix socket of the reader, or null: dnstap is off
 * @param identity  what each message gives as the identity, or null for the host's name
 * @param version   what each message gives as the version, or null for sluice's
 * @param queueSize messages waiting for the reader at most; more are dropped and counted
 */
public record DnstapSettings(Path socket, String identity, String version, int queueSize) {
    public boolean on() {
        return socket != null;
    }
}
