/**
 * DNS messages on the wire, read in place: the header and the one question of a query
 * ({@link io.sluice.wire.QueryView}), names with their compression rules
 * ({@link io.sluice.wire.Names}), the check that a reply answers a query
 * ({@link io.sluice.wire.Replies}), where a zone transfer's stream of messages ends
 * ({@link io.sluice.wire.ZoneTransfer}), and the answers sluice writes itself
 * ({@link io.sluice.wire.Answers}: FORMERR, NOTIMP, SERVFAIL, REFUSED, NXDOMAIN, TC), none larger
 * than the query plus an OPT record. Nothing here knows about sockets.
 */
package io.sluice.wire;
