/**
 * The listeners: UDP sockets (one per loop with SO_REUSEPORT) and TCP with length framing, idle
 * timeout and a connection bound ({@link io.sluice.frontend.Frontend}), and the query handler, the
 * only place that sees every stage of a query.
 */
package io.sluice.frontend;
