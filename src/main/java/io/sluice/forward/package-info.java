/**
 * Upstreams: one {@link io.sluice.forward.Forwarder} per event loop owns the queries in flight,
 * rewrites and matches message IDs, expires attempts, fails over and answers SERVFAIL; UDP
 * sockets connected per upstream and reused TCP connections carry them; the
 * {@link io.sluice.forward.UpstreamPool} keeps the order and brings down upstreams back. Nothing
 * here knows about limits.
 */
package io.sluice.forward;
