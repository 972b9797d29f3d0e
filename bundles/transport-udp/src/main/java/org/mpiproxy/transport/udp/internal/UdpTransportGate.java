package org.mpiproxy.transport.udp.internal;

import java.util.Map;

import org.mpiproxy.api.config.ConfigurationGate;
import org.osgi.service.component.ComponentContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Modified;
import org.slf4j.LoggerFactory;

/**
 * Enables {@link UdpTransportComponent} (declared disabled) once its configuration is good: until then a
 * bad value is one line in the log, and the UDP transport is not started and not registered.
 */
@Component(configurationPid = UdpTransportComponent.PID, service = {}, immediate = true)
public final class UdpTransportGate {

    private final ConfigurationGate<UdpTransportComponent.Config> gate = new ConfigurationGate<>(UdpTransportComponent.PID,
            UdpTransportComponent.Config.class, UdpTransportComponent::settings);

    @Activate
    void activate(ComponentContext context, Map<String, Object> properties) {
        gate.offer(properties, LoggerFactory.getLogger(UdpTransportComponent.class)::error,
                () -> context.enableComponent(UdpTransportComponent.PID));
    }

    @Modified
    void modified(ComponentContext context, Map<String, Object> properties) {
        gate.offerChange(properties, LoggerFactory.getLogger(UdpTransportComponent.class)::error,
                () -> context.enableComponent(UdpTransportComponent.PID));
    }
}
