package io.sluice.limit;

import io.sluice.domain.DomainKey;
import io.sluice.domain.DomainProbe;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;

/**
 * One domain in the limiter's table (a counter is its own key, which saves a cache miss per
 * lookup): its policy and, with {@link HeapCounters}, its single 64-bit word, moved by
 * compare-and-set. The janitor retires a heap counter by swapping its word for {@link #DEAD};
 * whoever then reads {@code DEAD} looks the domain up again, so no update can land on a counter
 * that has left the table.
 *
 * <p>A store that keeps more per domain makes its own subclass ({@link CounterStore#newCounter}),
 * so that the memory backend's counters carry nothing they do not use.
 */
public class Counter extends DomainKey {
    /** The word of a counter removed from the table. No algorithm stores it in a live counter. */
    static final long DEAD = Long.MIN_VALUE;

    private static final VarHandle STATE;
    private static final VarHandle FLOOD_WATCH;
    private static final VarHandle FLOOD_BUDGET;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Counter.class, "state", long.class);
            FLOOD_WATCH = MethodHandles.lookup().findVarHandle(Counter.class, "floodWatch", long.class);
            FLOOD_BUDGET = MethodHandles.lookup().findVarHandle(Counter.class, "floodBudget", Policy.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Changed in place, off the loops, when the domain's budget changes ({@link DomainLimiter#policies(PolicyTable)}). */
    volatile Policy policy;
    @SuppressWarnings("unused") // through STATE
    private volatile long state;
    /** What {@link Floods} counts of the upstream's answers in the domain's current window. */
    @SuppressWarnings("unused") // through FLOOD_WATCH
    private volatile long floodWatch;
    /**
     * The cut budget while the domain is flooded ({@link Floods}), else null. Moved only by
     * compare-and-set ({@link #swapFloodBudget}), so that each change into or out of a flood is
     * made, and counted, once.
     */
    private volatile Policy floodBudget;
    /** The window of the last refusal logged for this domain; at most one line per window. */
    volatile long loggedWindow = -1;
    /** Made from the name when first needed, so a flood of refusals or Redis calls formats nothing. */
    private volatile Texts texts;

    protected Counter(DomainProbe domain, Policy policy) {
        super(domain);
        this.policy = policy;
    }

    protected Counter(DomainKey domain, Policy policy) {
        super(domain);
        this.policy = policy;
    }

    public Policy policy() {
        return policy;
    }

    /** The budget decisions count against: the policy, or its cut while flooded. */
    public Policy budget() {
        Policy f = floodBudget;
        return f != null ? f : policy;
    }

    /** Whether the domain's upstream answers have made it flooded ({@link Floods}). */
    public boolean flooded() {
        return floodBudget != null;
    }

    Policy floodBudget() {
        return floodBudget;
    }

    boolean swapFloodBudget(Policy expected, Policy next) {
        return FLOOD_BUDGET.compareAndSet(this, expected, next);
    }

    long floodWatch() {
        return (long) FLOOD_WATCH.getVolatile(this);
    }

    boolean compareAndSetFloodWatch(long expected, long next) {
        return FLOOD_WATCH.compareAndSet(this, expected, next);
    }

    long get() {
        return (long) STATE.getVolatile(this);
    }

    boolean compareAndSet(long expected, long next) {
        return STATE.compareAndSet(this, expected, next);
    }

    /** The refusal's text is of the budget {@code of}: made again only when the budget changes. */
    private record Texts(String name, Policy of, byte[] refusal) {
    }

    private Texts texts() {
        Texts t = texts;
        Policy b = budget();
        if (t == null || t.of() != b) {
            String n = t == null ? name() : t.name();
            t = new Texts(n, b, ("sluice: " + n + " over " + budgetText()).getBytes(StandardCharsets.US_ASCII));
            texts = t; // racy but idempotent
        }
        return t;
    }

    /** The budget in force, as the refusal text and log say it. */
    String budgetText() {
        Policy f = floodBudget;
        return f == null ? policy.toString() : f + " (cut: a random-subdomain flood)";
    }

    /** The Extended DNS Error text of a refusal. */
    public byte[] refusalText() {
        return texts().refusal();
    }

    /** {@link #name()}, made once. */
    public String cachedName() {
        return texts().name();
    }
}
