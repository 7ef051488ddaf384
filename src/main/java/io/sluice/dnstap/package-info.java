/**
 * dnstap: the query path's messages as dnstap protobufs, in Frame Streams to a reader's unix
 * socket, from a queue the loops fill and a thread of its own drains. See README.md here.
 */
package io.sluice.dnstap;
