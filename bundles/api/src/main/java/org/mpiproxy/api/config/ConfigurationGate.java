package org.mpiproxy.api.config;

import java.lang.annotation.Annotation;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Holds a component back until its configuration is good for the first time.
 * <p>
 * A Declarative Services component whose activation fails stays registered as a service that
 * cannot be got: the runtime logs a stack trace for every consumer that tries, and consumers that
 * track the service (Karaf's shell commands among them) saw it fail once and do not look again
 * when a fixed value lets it start. So the gated component is declared disabled, and a small gate
 * component with the same configuration PID offers every configuration it receives here: a bad
 * one is one line ({@code pid: key=value is not ...; no good configuration yet: not started until
 * the value is fixed}), the first good one enables the component. From then on the gate does
 * nothing: the component itself keeps its last good configuration when a later value is bad.
 * <p>
 * A good value that replaces a bad one is enabled a moment later ({@link #AFTER_CHANGE}): the
 * runtime hands a configuration change to the components of one PID one after the other, and a
 * component enabled from within the gate's own hand-over would start with the bad value it held
 * before, failing once more.
 * <p>
 * One instance per activation of the gate component (a restarted bundle starts with its
 * components disabled again). Thread-safe.
 *
 * @param <A> the gated component's configuration annotation type
 */
public final class ConfigurationGate<A extends Annotation> {

    /** How long after a changed configuration the component is enabled; see the class comment. */
    public static final java.time.Duration AFTER_CHANGE = java.time.Duration.ofMillis(250);

    private final String pid;
    private final CheckedConfiguration<A> checked;
    private final Function<A, ?> validate;
    /** Runs the enabling after a changed configuration once the delay has passed. */
    private final BiConsumer<Duration, Runnable> later;
    /** Where a refusal is reported until the first good configuration. */
    private final ConfigurationReports reports;
    private boolean open;
    private String lastProblem;

    /**
     * @param pid      the configuration PID, named in the problem lines
     * @param type     the configuration annotation type
     * @param validate checks a typed view as the component does, throwing
     *                 {@link IllegalArgumentException} naming the bad key and value
     */
    public ConfigurationGate(String pid, Class<A> type, Function<A, ?> validate) {
        this(pid, type, validate, (delay, task) -> startLater("mpiproxy-enable-" + pid, delay, task));
    }

    /**
     * As {@link #ConfigurationGate(String, Class, Function)}, with what runs the enabling after a
     * changed configuration: a test runs it when it chooses instead of waiting.
     *
     * @param later runs the task once the delay has passed, never on the calling thread
     */
    ConfigurationGate(String pid, Class<A> type, Function<A, ?> validate, BiConsumer<Duration, Runnable> later) {
        this(pid, type, validate, later, ConfigurationReports.node());
    }

    /**
     * As {@link #ConfigurationGate(String, Class, Function, BiConsumer)}, reporting refusals to
     * {@code reports}.
     */
    ConfigurationGate(String pid, Class<A> type, Function<A, ?> validate, BiConsumer<Duration, Runnable> later,
                      ConfigurationReports reports) {
        this.reports = Objects.requireNonNull(reports, "reports");
        this.pid = Objects.requireNonNull(pid, "pid");
        this.checked = new CheckedConfiguration<>(type);
        this.validate = Objects.requireNonNull(validate, "validate");
        this.later = Objects.requireNonNull(later, "later");
    }

    /**
     * Offers a configuration: enables the component when it is the first good one.
     *
     * @param properties the raw properties the gate component received
     * @param problems   gets the one line that says why the component does not start; a value
     *                   offered again unchanged is not reported again
     * @param enable     enables the gated component; run at most once
     * @return whether the component is enabled, now or before
     */
    public synchronized boolean offer(Map<String, ?> properties, Consumer<String> problems, Runnable enable) {
        if (open) {
            return true;
        }
        try {
            validate.apply(checked.typed(properties));
        } catch (IllegalArgumentException e) {
            String line = pid + ": " + e.getMessage() + "; no good configuration yet: not started until the value is fixed";
            reports.refused(pid, line, false);
            if (!line.equals(lastProblem)) {
                lastProblem = line;
                problems.accept(line);
            }
            return false;
        }
        open = true;
        lastProblem = null;
        enable.run();
        return true;
    }

    /**
     * Offers a changed configuration (the gate component's modified method): as
     * {@link #offer}, the enabling run {@link #AFTER_CHANGE} later on a thread of its own.
     *
     * @param properties the raw properties the gate component received
     * @param problems   gets the one line that says why the component does not start
     * @param enable     enables the gated component; run at most once
     * @return whether the component is enabled or about to be
     */
    public boolean offerChange(Map<String, ?> properties, Consumer<String> problems, Runnable enable) {
        return offer(properties, problems, () -> later.accept(AFTER_CHANGE, enable));
    }

    /** Runs a task on a daemon thread of its own once the delay has passed. */
    private static void startLater(String name, Duration delay, Runnable task) {
        Thread thread = new Thread(() -> {
            try {
                Thread.sleep(delay.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            task.run();
        }, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** @return whether a good configuration enabled the component */
    public synchronized boolean isOpen() {
        return open;
    }
}
