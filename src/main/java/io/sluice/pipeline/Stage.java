package io.sluice.pipeline;

/**
 * One step of the query path, both ways: the query on its way to the upstream ({@link #handle}),
 * and the upstream's answer on its way back ({@link #answers}). Each event loop has its own
 * instances, so a stage may keep scratch state without locks; every method runs on that loop.
 */
public interface Stage {
    /** Decides what to do with {@code q}, or {@link Outcome#CONTINUE} to pass it on. */
    Outcome handle(Query q);

    /**
     * Gives a stage that parks queries the way to resume them: {@code next} runs the stages after
     * this one. Called once, when the pipeline is assembled.
     */
    default void attach(Continuation next) {
    }

    /** The end of a read burst (every datagram or frame one wake-up read): what was parked may go out. */
    default void endOfBurst() {
    }

    /**
     * The way back: what this stage does with an upstream's answer to a query it passed on, or
     * with none coming; null when it does nothing there. The forwarder hands each answer to the
     * stages' answer sides in reverse order, the stage nearest the upstream first, as a CoreDNS
     * plugin sees the reply of the plugins after it ({@link Pipeline#answersOf}).
     */
    default UpstreamReplies answers() {
        return null;
    }

    /**
     * A later stage is about to turn {@code q} away for being over a budget: this stage may answer
     * it instead (the cache, with a stale answer), or {@link Outcome#CONTINUE} to let it be turned
     * away. Asked through {@link Continuation#overBudget}, the nearest stage first.
     */
    default Outcome overBudget(Query q) {
        return Outcome.CONTINUE;
    }

    /** Queries this stage holds parked now, for draining at stop. */
    default int parked() {
        return 0;
    }

    /** The rest of the path after one stage, for queries it parked. */
    interface Continuation {
        /** The parked query as a {@link Query} again (its message read anew); valid until the next reopen. */
        Query reopen(ParkedQuery parked);

        /** Runs {@code q} through the stages after the one this continuation was given to. */
        Outcome proceed(Query q);

        /**
         * Asks the stages before the one this continuation was given to, the nearest first, to
         * answer {@code q}, over a budget, instead of it being turned away ({@link Stage#overBudget}).
         *
         * @return how the first that did answered it, or {@link Outcome#CONTINUE} when none did
         */
        Outcome overBudget(Query q);
    }
}
