package io.sluice.config;

import java.nio.file.Path;
import java.util.List;

/**
 * dnstap. Documented key by key in {@code conf/sluice.yml}.
 *
 * @param socket    the Frame Streams unix socket of the reader, or null: dnstap is off
 * @param identity  what each message gives as the identity, or null for the host's name
 * @param version   what each message gives as the version, or null for sluice's
 * @param queueSize messages waiting for the reader at most; more are dropped and counted
 * @param messages  the kinds of message written
 */
public record DnstapSettings(Path socket, String identity, String version, int queueSize, List<Message> messages) {
    public DnstapSettings {
        messages = List.copyOf(messages);
    }

    public boolean on() {
        return socket != null;
    }

    /** The kinds of message dnstap has for a forwarder, as Unbound's dnstap-log-*-messages switches name them. */
    public enum Message {
        CLIENT_QUERY, CLIENT_RESPONSE, FORWARDER_QUERY, FORWARDER_RESPONSE;

        @Override
        public String toString() {
            return Values.configName(this);
        }
    }
}
