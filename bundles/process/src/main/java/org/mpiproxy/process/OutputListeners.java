package org.mpiproxy.process;

import java.util.concurrent.CopyOnWriteArrayList;

import org.mpiproxy.api.RankOutputListener;

/** The {@link RankOutputListener} services a launcher knows, called in turn. Thread-safe. */
public final class OutputListeners implements RankOutputListener {

    private final CopyOnWriteArrayList<RankOutputListener> listeners = new CopyOnWriteArrayList<>();

    /** @param listener called from now on */
    public void add(RankOutputListener listener) {
        listeners.addIfAbsent(listener);
    }

    /** @param listener no longer called */
    public void remove(RankOutputListener listener) {
        listeners.remove(listener);
    }

    @Override
    public void onOutput(long jobId, int rankId, Stream stream, String text, boolean partial) {
        for (RankOutputListener listener : listeners) {
            listener.onOutput(jobId, rankId, stream, text, partial);
        }
    }

    @Override
    public void onEnd(long jobId, int rankId, Stream stream) {
        for (RankOutputListener listener : listeners) {
            listener.onEnd(jobId, rankId, stream);
        }
    }
}
