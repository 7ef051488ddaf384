package io.sluice.pipeline;

/** What a stage made of a query: go on to the next stage, or what became of it. */
public enum Outcome {
    /** Not decided here: the next stage has it. */
    CONTINUE,
    /** Answered, or to be answered once an upstream has. */
    ANSWERED,
    /** Kept by the stage (a copy), to be resumed later on the same event loop. */
    PARKED,
    /** No answer will come (over its limit with action drop). */
    DROPPED,
    /** Not a DNS query at all (no ID, or a response): a TCP peer sending it is closed. */
    NOT_A_QUERY
}
