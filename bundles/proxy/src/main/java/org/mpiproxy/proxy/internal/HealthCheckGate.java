package org.mpiproxy.proxy.internal;

import java.util.Map;

import org.mpiproxy.api.config.ConfigurationGate;
import org.osgi.service.component.ComponentContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Modified;
import org.slf4j.LoggerFactory;

/**
 * Enables {@link HealthCheckComponent} (declared disabled) once its configuration is good: until then a
 * bad value is one line in the log, and the health checks is not started and not registered.
 */
@Component(configurationPid = HealthCheckComponent.PID, service = {}, immediate = true)
public final class HealthCheckGate {

    private final ConfigurationGate<HealthCheckComponent.Config> gate = new ConfigurationGate<>(HealthCheckComponent.PID,
            HealthCheckComponent.Config.class, HealthCheckComponent::settings);

    @Activate
    void activate(ComponentContext context, Map<String, Object> properties) {
        gate.offer(properties, LoggerFactory.getLogger(HealthCheckComponent.class)::error,
                () -> context.enableComponent(HealthCheckComponent.PID));
    }

    @Modified
    void modified(ComponentContext context, Map<String, Object> properties) {
        gate.offerChange(properties, LoggerFactory.getLogger(HealthCheckComponent.class)::error,
                () -> context.enableComponent(HealthCheckComponent.PID));
    }
}
