package io.sluice.transport;

/**
 * How a DNS message travels between two sockets: what dnstap records of each message, in the
 * same four kinds as its {@code SocketProtocol}.
 */
public enum SocketProtocol {
    UDP("udp"), TCP("tcp"), DOT("tls"), DOH("https");

    private final String label;

    SocketProtocol(String label) {
        this.label = label;
    }

    /** What the listeners' counters and the startup line call it: udp, tcp, tls, https. */
    public String label() {
        return label;
    }
}
