package org.mpiproxy.channel.shm.internal;

import java.util.Map;

import org.mpiproxy.api.config.ConfigurationGate;
import org.osgi.service.component.ComponentContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Modified;
import org.slf4j.LoggerFactory;

/**
 * Enables {@link MappedFileChannelManager} (declared disabled) once its configuration is good and its base
 * directory usable (made by the proxy, or an existing one of the proxy's user that nobody else can write): until
 * then a bad value or a refused directory is one line in the log, and the channel manager is not started and not
 * registered (the node is not ready: {@code shm.free} says the channel manager is not running).
 */
@Component(configurationPid = MappedFileChannelManager.PID, service = {}, immediate = true)
public final class ChannelManagerGate {

    private final ConfigurationGate<MappedFileChannelManager.Config> gate = new ConfigurationGate<>(MappedFileChannelManager.PID,
            MappedFileChannelManager.Config.class, MappedFileChannelManager::usable);

    @Activate
    void activate(ComponentContext context, Map<String, Object> properties) {
        gate.offer(properties, LoggerFactory.getLogger(MappedFileChannelManager.class)::error,
                () -> context.enableComponent(MappedFileChannelManager.PID));
    }

    @Modified
    void modified(ComponentContext context, Map<String, Object> properties) {
        gate.offerChange(properties, LoggerFactory.getLogger(MappedFileChannelManager.class)::error,
                () -> context.enableComponent(MappedFileChannelManager.PID));
    }
}
