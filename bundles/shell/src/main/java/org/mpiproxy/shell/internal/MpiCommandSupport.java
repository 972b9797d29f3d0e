package org.mpiproxy.shell.internal;

import org.apache.karaf.shell.api.action.Action;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.mpiproxy.api.ProxyStatus;

/** Base of the {@code mpi:*} commands: looks up the proxy's status service. */
public abstract class MpiCommandSupport implements Action {

    @Reference
    private ProxyStatus proxyStatus;

    /**
     * Sets the status service; the shell injects it, tests call this.
     *
     * @param proxyStatus the proxy's status
     */
    public void setProxyStatus(ProxyStatus proxyStatus) {
        this.proxyStatus = proxyStatus;
    }

    @Override
    public Object execute() throws Exception {
        if (proxyStatus == null) {
            throw new IllegalStateException("the MPI proxy is not running");
        }
        return doExecute(proxyStatus);
    }

    /**
     * Runs the command.
     *
     * @param status the proxy's status
     * @return the command's result, usually {@code null}
     * @throws Exception when the command fails
     */
    protected abstract Object doExecute(ProxyStatus status) throws Exception;
}
