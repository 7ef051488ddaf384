package io.sluice.forward;

import io.netty.channel.EventLoop;
import io.sluice.pipeline.Outcome;
import io.sluice.pipeline.Query;
import io.sluice.pipeline.Stage;

/**
 * The last stage: the query goes to its loop's {@link Forwarder}, which answers it in all cases,
 * back through the stages before this one. A reload may hand it the forwarder of a new generation
 * ({@link Generation}); only its loop's thread reads or changes which.
 */
public final class ForwardStage implements Stage {
    private Forwarder forwarder;
    /** The way back from here: the stages before, then the client's route. */
    private Continuation back;

    public ForwardStage(Forwarder forwarder) {
        this.forwarder = forwarder;
    }

    @Override
    public void attach(Continuation next) {
        this.back = next;
    }

    @Override
    public Outcome handle(Query q) {
        forwarder.forward(q.message(), q.view(), q.replyRoute(), q.answerNote(), q.domainHash(), back);
        return Outcome.ANSWERED;
    }

    /** The loop this stage runs on: its forwarder's. */
    public EventLoop loop() {
        return forwarder.loop();
    }

    /** From now on queries go to {@code next}, which must be of this stage's loop; call on that loop. */
    public void switchTo(Forwarder next) {
        if (!next.loop().inEventLoop()) {
            throw new IllegalStateException("a forward stage switches on its own loop");
        }
        forwarder = next;
    }
}
