package io.sluice.pipeline;

/**
 * The event a TCP client's connection gets when a query it was told would be answered
 * ({@link Outcome#PARKED}) never will be ({@link Query#droppedAfterParking}): a connection counts
 * the answers it owes, and one that carries many exchanges finds this one by {@code id}.
 *
 * @param id the message ID the query was asked with
 */
public record DroppedQuery(int id) {
}
