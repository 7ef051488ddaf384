/**
 * Native epoll or NIO, chosen once ({@link io.sluice.transport.Transport}); the UDP sockets, JDK
 * channels the loop watches ({@link io.sluice.transport.UdpSocket}), and how addresses are written.
 */
package io.sluice.transport;
