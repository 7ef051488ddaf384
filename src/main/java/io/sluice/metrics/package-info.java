/** Every counter ({@link io.sluice.metrics.Meters}) and their Prometheus endpoint. */
package io.sluice.metrics;
