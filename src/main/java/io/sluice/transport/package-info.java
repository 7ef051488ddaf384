/** Native epoll or NIO, chosen once ({@link io.sluice.transport.Transport}), and how addresses are written. */
package io.sluice.transport;
