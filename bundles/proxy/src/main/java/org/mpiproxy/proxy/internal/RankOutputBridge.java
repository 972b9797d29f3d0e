package org.mpiproxy.proxy.internal;

import org.mpiproxy.api.RankOutputListener;
import org.mpiproxy.process.OutputListeners;
import org.osgi.service.component.annotations.Component;

/**
 * The proxy's {@link RankOutputListener} service: hands every line to the v2 output streams of
 * the running {@link ProxyComponent}, which sets itself as the target. A component of its own,
 * with no references, because the launchers that call it are references of the proxy: the proxy
 * itself as the listener would make a circle of services that SCR refuses to bind
 * ("Circular reference detected"), leaving some launchers without it. While there is no target
 * (the proxy is starting, or taking over from its previous revision), lines are held in order
 * and given to the next target ({@link OutputListeners}). Thread-safe.
 */
@Component(name = RankOutputBridge.NAME, service = RankOutputListener.class, immediate = true)
public class RankOutputBridge implements RankOutputListener {

    /** Component name, the proxy's reference target. */
    static final String NAME = "org.mpiproxy.proxy.output";

    private final OutputListeners target = new OutputListeners();
    private RankOutputListener current;

    /** @param listener receives the lines from now on, after those held; {@code null} for none (lines are held) */
    synchronized void target(RankOutputListener listener) {
        if (current != null) {
            target.remove(current);
        }
        current = listener;
        if (listener != null) {
            target.add(listener);
        }
    }

    @Override
    public void onOutput(long jobId, int rankId, Stream stream, String text, boolean partial) {
        target.onOutput(jobId, rankId, stream, text, partial);
    }

    @Override
    public void onEnd(long jobId, int rankId, Stream stream) {
        target.onEnd(jobId, rankId, stream);
    }
}
