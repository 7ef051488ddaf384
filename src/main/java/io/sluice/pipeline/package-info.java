/**
 * The query path as stages: a {@link io.sluice.pipeline.Pipeline} per event loop runs each
 * {@link io.sluice.pipeline.Query} through its {@link io.sluice.pipeline.Stage}s in order
 * (client rules, message check, answer cache, limits, forward), each of which may pass it on, answer it, drop it, or park a
 * copy and resume it later on the same loop. See README.md beside this file.
 */
package io.sluice.pipeline;
