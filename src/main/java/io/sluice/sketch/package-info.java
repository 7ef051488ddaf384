/**
 * Approximate structures: small, lock-free, bounded whatever arrives. A leaf: it knows nothing of
 * DNS.
 */
package io.sluice.sketch;
