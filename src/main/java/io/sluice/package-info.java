/**
 * sluice: a DNS forwarder that limits queries per registrable domain.
 *
 * <p>{@link io.sluice.Main} is the command line (settings, exit codes, signals) and
 * {@link io.sluice.Sluice} wires one running forwarder and assembles each event loop's
 * {@code pipeline} of stages. A query goes one way through the packages: {@code frontend} (UDP/TCP
 * listeners) hands it to its loop's pipeline, whose stages read it ({@code wire}), count it
 * ({@code limit}, with {@code domain} for its registrable domain and a {@code backend} for shared
 * counters) and forward it ({@code forward}); the reply goes back through the listener.
 * {@code config}, {@code metrics} and {@code transport} are leaves; {@code stress} (the load tool)
 * uses none of the others but those leaves and {@link io.sluice.posix.Signals}.
 */
package io.sluice;
