package io.sluice.transport;

/**
 * How a DNS message travels between two sockets: what dnstap records of each message, in the
 * same four kinds as its {@code SocketProtocol}.
 */
public enum SocketProtocol {
    UDP, TCP, DOT, DOH
}
