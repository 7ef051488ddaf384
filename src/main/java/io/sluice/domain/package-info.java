/**
 * Query name to registrable domain by the Public Suffix List, on wire bytes and without
 * allocating ({@link io.sluice.domain.RegistrableDomains}); the list comes from Guava's copy
 * ({@code GuavaSuffixList}) or a file. {@link io.sluice.domain.DomainProbe} is the per-loop result,
 * {@link io.sluice.domain.DomainKey} its stored form.
 */
package io.sluice.domain;
