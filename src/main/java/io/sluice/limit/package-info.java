/**
 * The per-domain budgets. {@link io.sluice.limit.DomainLimiter} decides (overrides, unlimited
 * domains, the table bound, the overflow counter); an {@code Algorithm} (fixed window, sliding
 * window, token bucket) only moves a counter's one 64-bit word by compare-and-set; the
 * {@link io.sluice.limit.Janitor} thread removes counters of ended windows and writes the logs;
 * time comes from an injected {@link io.sluice.limit.Clock}. {@link io.sluice.limit.Limits}
 * bundles what the query handler needs. Nothing here knows about Netty.
 */
package io.sluice.limit;
