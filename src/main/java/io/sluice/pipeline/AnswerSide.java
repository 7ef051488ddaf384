package io.sluice.pipeline;

/**
 * What a stage does with the answers on their way back ({@link Stage#answers}): each answer made
 * after the stage (by a later stage, the forwarder, an upstream) passes the answer sides of the
 * stages before its maker, the nearest first, as a CoreDNS plugin sees the reply of the plugins
 * after it through the writer it wrapped. The answer cache keeps the upstreams' answers and puts a
 * stale one in the place of a SERVFAIL; the limit stage's flood watch counts the NXDOMAINs.
 *
 * <p>Called on the loop; an answer side answers nothing itself and parks nothing. An exception
 * out of one (a bug) is counted in {@code internal_errors}, and the answer goes on to the others
 * and to its client.
 */
@FunctionalInterface
public interface AnswerSide {
    /**
     * Sees {@code answer}; may put another in its place ({@link Answer#replace}). Its message is
     * null for a query over its budget that the limit's action drops.
     */
    void answer(Answer answer);
}
