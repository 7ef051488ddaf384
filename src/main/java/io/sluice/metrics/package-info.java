/**
 * The {@link io.sluice.metrics.Registry} of counters and gauges, which each package fills with its
 * own where it counts, and their Prometheus endpoint.
 */
package io.sluice.metrics;
