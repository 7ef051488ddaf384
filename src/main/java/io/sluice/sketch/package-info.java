/**
 * Approximate structures, small, lock-free and bounded whatever arrives, and the keyed hash and
 * cache-line padding that the tables of client-chosen bytes use. A leaf: it knows nothing of DNS.
 */
package io.sluice.sketch;
