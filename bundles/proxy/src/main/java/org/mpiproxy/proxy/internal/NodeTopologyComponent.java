package org.mpiproxy.proxy.internal;

import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.api.config.CheckedConfiguration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the node's {@link NodeTopology} for the MPICH ranks this bundle's proxy starts: discovered
 * (or the file of a previous start used again) at activation, on a thread of its own; discovered
 * again at every change of the proxy's configuration ({@code topology.handover},
 * {@code topology.max.age.hours}, or any other key: the operator's way to ask for it).
 */
@Component(name = "org.mpiproxy.topology", configurationPid = ProxyComponent.PID,
        configurationPolicy = ConfigurationPolicy.OPTIONAL, immediate = true, service = {})
public class NodeTopologyComponent {

    private static final Logger LOG = LoggerFactory.getLogger(NodeTopologyComponent.class);

    /** The topology of the active component, read by the v2 dispatcher's plain launches. */
    private static volatile NodeTopology inForce;

    private final CheckedConfiguration<ProxyConfig> configurations = new CheckedConfiguration<>(ProxyConfig.class);
    private final ExecutorService executor;
    private final NodeTopology topology;

    /** @param properties the proxy's configuration properties */
    @Activate
    public NodeTopologyComponent(Map<String, Object> properties) {
        this.executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "mpiproxy-topology");
            t.setDaemon(true);
            return t;
        });
        this.topology = new NodeTopology(NodeTopology.directory(System::getProperty), NodeTopology.COMMAND,
                NodeTopology.Node.LINUX, System::currentTimeMillis, executor, LOG::warn);
        apply(properties);
        inForce = topology;
        topology.start();
    }

    /** @return the topology plain ranks get, or {@code null} while no component is active */
    static NodeTopology inForce() {
        return inForce;
    }

    /** Follows the switch and the age, and discovers the topology again. */
    @Modified
    void modified(Map<String, Object> properties) {
        apply(properties);
        topology.refresh();
    }

    /** A bad value keeps the settings in force (the proxy logs it). */
    private void apply(Map<String, Object> properties) {
        try {
            topology.settings(NodeTopology.Settings.of(configurations.typed(properties)));
        } catch (IllegalArgumentException e) {
            LOG.debug("topology settings kept: {}", e.getMessage());
        }
    }

    @Deactivate
    void deactivate() {
        if (inForce == topology) {
            inForce = null;
        }
        executor.shutdownNow();
    }
}
