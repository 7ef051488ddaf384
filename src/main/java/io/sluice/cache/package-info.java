/**
 * The answer cache: {@link io.sluice.cache.AnswerCache}, shared by the event loops, and a
 * {@link io.sluice.cache.CacheStage} per loop, in the query path before the limits and behind the
 * forwarder. See README.md beside this file.
 */
package io.sluice.cache;
