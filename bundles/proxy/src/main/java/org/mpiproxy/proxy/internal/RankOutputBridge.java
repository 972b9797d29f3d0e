package org.mpiproxy.proxy.internal;

import org.mpiproxy.api.RankOutputListener;
import org.osgi.service.component.annotations.Component;

/**
 * The proxy's {@link RankOutputListener} service: hands every line to the v2 output streams of
 * the running {@link ProxyComponent}, which sets itself as the target. A component of its own,
 * with no references, because the launchers that call it are references of the proxy: the proxy
 * itself as the listener would make a circle of services that SCR refuses to bind
 * ("Circular reference detected"), leaving some launchers without it. Thread-safe.
 */
@Component(name = RankOutputBridge.NAME, service = RankOutputListener.class, immediate = true)
public class RankOutputBridge implements RankOutputListener {

    /** Component name, the proxy's reference target. */
    static final String NAME = "org.mpiproxy.proxy.output";

    private volatile RankOutputListener target;

    /** @param listener receives the lines from now on; {@code null} for none */
    void target(RankOutputListener listener) {
        this.target = listener;
    }

    @Override
    public void onOutput(long jobId, int rankId, Stream stream, String text, boolean partial) {
        RankOutputListener t = target;
        if (t != null) {
            t.onOutput(jobId, rankId, stream, text, partial);
        }
    }

    @Override
    public void onEnd(long jobId, int rankId, Stream stream) {
        RankOutputListener t = target;
        if (t != null) {
            t.onEnd(jobId, rankId, stream);
        }
    }
}
