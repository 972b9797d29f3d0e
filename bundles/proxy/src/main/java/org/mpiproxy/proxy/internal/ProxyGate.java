package org.mpiproxy.proxy.internal;

import java.util.Map;

import org.mpiproxy.api.config.ConfigurationGate;
import org.osgi.service.component.ComponentContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Modified;
import org.slf4j.LoggerFactory;

/**
 * Enables {@link ProxyComponent} and {@link LocalSocketComponent} (declared disabled) once their
 * configuration is good: until then a bad value is one line in the log, and the proxy is not
 * started and not registered.
 */
@Component(configurationPid = ProxyComponent.PID, service = {}, immediate = true)
public final class ProxyGate {

    private final ConfigurationGate<ProxyConfig> gate = new ConfigurationGate<>(ProxyComponent.PID,
            ProxyConfig.class, ProxyConfigs::validate);

    @Activate
    void activate(ComponentContext context, Map<String, Object> properties) {
        gate.offer(properties, LoggerFactory.getLogger(ProxyComponent.class)::error, () -> enable(context));
    }

    @Modified
    void modified(ComponentContext context, Map<String, Object> properties) {
        gate.offerChange(properties, LoggerFactory.getLogger(ProxyComponent.class)::error, () -> enable(context));
    }

    private static void enable(ComponentContext context) {
        context.enableComponent(ProxyComponent.PID);
        context.enableComponent(LocalSocketComponent.NAME);
    }
}
