/**
 * sluice: a DNS forwarder that limits queries per registrable domain.
 *
 * <p>{@link io.sluice.Main} is the command line (settings, exit codes, signals) and
 * {@link io.sluice.Sluice} wires one running forwarder. A query goes one way through the packages:
 * {@code frontend} (UDP/TCP listeners) reads it with {@code wire}, asks {@code domain} for its
 * registrable domain and {@code limit} for a decision, then hands it to {@code forward} (upstreams),
 * whose reply goes back through the listener. {@code config}, {@code metrics} and
 * {@code transport} are leaves; {@code stress} (the load tool) uses none of the others.
 */
package io.sluice;
