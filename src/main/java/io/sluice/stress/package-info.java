/**
 * The load tools in the jar: {@code stress} ({@code scripts/dnsstress}, dnsstresss-compatible) and
 * {@code answer} (an upstream that answers everything, for benchmarks). They speak DNS on the wire
 * themselves and use no other sluice package, so that they measure sluice from the outside.
 */
package io.sluice.stress;
