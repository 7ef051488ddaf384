/**
 * Random-subdomain flood detection: {@link io.sluice.flood.Floods} judges each domain's windows of
 * upstream answers and flags the flooded ones in the limiter's counter table, which then decides
 * them against a cut of their budget; each loop's {@link io.sluice.flood.FloodWatch} is the limit
 * stage's answer side.
 */
package io.sluice.flood;
