package org.mpiproxy.process;

import java.util.ArrayDeque;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;

import org.mpiproxy.api.RankOutputListener;

/**
 * The {@link RankOutputListener} services a launcher knows, called in turn. While there is none
 * (the proxy that takes the lines is being updated: its old revision's listener is gone, the new
 * one's not yet there), lines and stream ends are held, in order, up to {@link #MAX_HELD}, and
 * given to the next listener added before anything that comes after them; beyond that they are
 * dropped and counted. Thread-safe.
 */
public final class OutputListeners implements RankOutputListener {

    /** Lines and stream ends held at most while no listener is there. */
    public static final int MAX_HELD = 10_000;

    /** A line ({@code text} not null) or the end of a stream ({@code text} null). */
    private record Held(long jobId, int rankId, Stream stream, String text, boolean partial) {
    }

    static {
        // loaded now: a rank's output thread keeps calling this instance after a refresh of this bundle
        Held.class.getName();
    }

    private final CopyOnWriteArrayList<RankOutputListener> listeners = new CopyOnWriteArrayList<>();
    // guarded by held
    private final ArrayDeque<Held> held = new ArrayDeque<>();
    private boolean flushing;
    /** {@code held.size()}, read without the lock by every line: 0 lets a line go straight to the listeners. */
    private volatile int heldCount;
    private final LongAdder dropped = new LongAdder();

    /** @param listener called from now on, after it was given what is held */
    public void add(RankOutputListener listener) {
        listeners.addIfAbsent(listener);
        flush();
    }

    /** @param listener no longer called */
    public void remove(RankOutputListener listener) {
        listeners.remove(listener);
    }

    /** @return lines and stream ends dropped because no listener took them in time */
    public long dropped() {
        return dropped.sum();
    }

    @Override
    public void onOutput(long jobId, int rankId, Stream stream, String text, boolean partial) {
        if (!held() || !hold(new Held(jobId, rankId, stream, text, partial))) {
            for (RankOutputListener listener : listeners) {
                listener.onOutput(jobId, rankId, stream, text, partial);
            }
        }
    }

    @Override
    public void onEnd(long jobId, int rankId, Stream stream) {
        if (!held() || !hold(new Held(jobId, rankId, stream, null, false))) {
            for (RankOutputListener listener : listeners) {
                listener.onEnd(jobId, rankId, stream);
            }
        }
    }

    /** @return whether a line may have to be held: no listener is there, or lines are held (the usual case is neither) */
    private boolean held() {
        return heldCount != 0 || listeners.isEmpty();
    }

    /**
     * @return whether the line was held (or dropped): no listener is there; {@code false} when the
     *         caller gives it to the listeners now. While lines held before are being given to a
     *         listener, the caller waits for that first, as it would wait for a slow listener.
     */
    private boolean hold(Held line) {
        synchronized (held) {
            while (flushing && !held.isEmpty() && !listeners.isEmpty()) {
                try {
                    held.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            if (!listeners.isEmpty() && held.isEmpty()) {
                return false;
            }
            if (held.size() >= MAX_HELD) {
                dropped.increment();
            } else {
                held.addLast(line);
                heldCount = held.size();
            }
        }
        flush();
        return true;
    }

    /** Gives what is held to the listeners, in order, outside the lock (a listener may wait for room). */
    private void flush() {
        synchronized (held) {
            if (flushing || listeners.isEmpty()) {
                return;
            }
            flushing = true;
        }
        boolean done = false;
        try {
            while (true) {
                Held next;
                synchronized (held) {
                    next = held.peekFirst();
                    if (next == null || listeners.isEmpty()) {
                        // under the lock: a line held from now on finds nobody flushing and flushes itself
                        flushing = false;
                        done = true;
                        held.notifyAll();
                        return;
                    }
                }
                for (RankOutputListener listener : listeners) {
                    if (next.text() != null) {
                        listener.onOutput(next.jobId(), next.rankId(), next.stream(), next.text(), next.partial());
                    } else {
                        listener.onEnd(next.jobId(), next.rankId(), next.stream());
                    }
                }
                synchronized (held) {
                    held.pollFirst();
                    heldCount = held.size();
                    if (held.isEmpty()) {
                        held.notifyAll();
                    }
                }
            }
        } finally {
            if (!done) {
                synchronized (held) {
                    flushing = false;
                    held.notifyAll();
                }
            }
        }
    }
}
