package io.sluice.pipeline;

/**
 * One step of the query path, both ways: the query on its way to the upstream ({@link #handle}),
 * and the answers made after it on their way back ({@link #answers}). Each event loop has its own
 * instances, so a stage may keep scratch state without locks; every method runs on that loop.
 */
public interface Stage {
    /** Decides what to do with {@code q}, or {@link Outcome#CONTINUE} to pass it on. */
    Outcome handle(Query q);

    /**
     * Gives a stage the path around it: {@code next} runs the stages after this one (a parked
     * query resumes there) and sends an answer this stage makes later back through those before
     * it. Called once, when the pipeline is assembled.
     */
    default void attach(Continuation next) {
    }

    /** The end of a read burst (every datagram or frame one wake-up read): what was parked may go out. */
    default void endOfBurst() {
    }

    /**
     * The way back: what this stage does with the answers made after it, on their way to the
     * client (the nearest stage's side first); null when it does nothing there.
     */
    default AnswerSide answers() {
        return null;
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
         * Sends {@code answer}, made by the stage this continuation was given to (the forwarder's
         * answers, made after the stages ran), back through the answer sides of the stages before
         * it, the nearest first, and out through its route.
         *
         * @return who made the answer that left: another than {@code answer}'s maker when an answer
         *         side put one in its place
         */
        Answer.Source back(Answer answer);
    }
}
