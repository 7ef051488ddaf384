package io.sluice.pipeline;

import io.netty.channel.EventLoop;
import java.util.ArrayList;
import java.util.List;

/**
 * One feature's part in each event loop's query path, made once by the feature's setup from its
 * settings: its stage on every loop, what it runs beside the queries once the listeners are open,
 * and its stop. The server lists its modules in the order of the query path, asks each for its
 * stage on every loop, and stops them in reverse after the loops' last query.
 */
@FunctionalInterface
public interface Module extends AutoCloseable {
    /** Its stage in {@code loop}'s query path, made once per loop; null when it has none there now. */
    Stage stage(EventLoop loop);

    /** {@code loop}'s stages, one from each of {@code modules} that has one, in their order. */
    static List<Stage> stagesOf(List<? extends Module> modules, EventLoop loop) {
        List<Stage> stages = new ArrayList<>();
        for (Module m : modules) {
            Stage stage = m.stage(loop);
            if (stage != null) {
                stages.add(stage);
            }
        }
        return stages;
    }

    /** Starts what runs beside the queries (a log writer, a janitor), once the listeners are open. */
    default void start() {
    }

    /** Stops what it runs, once no loop runs a query. */
    @Override
    default void close() throws Exception {
    }
}
