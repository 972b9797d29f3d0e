package org.mpiproxy.launcher.core.internal;

import java.util.Map;

import org.mpiproxy.api.config.ConfigurationGate;
import org.mpiproxy.process.RankUser;
import org.osgi.service.component.ComponentContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Modified;
import org.slf4j.LoggerFactory;

/**
 * Enables {@link CoreLauncherComponent} (declared disabled) once its configuration is good: until then a
 * bad value is one line in the log, and the core launcher is not started and not registered.
 */
@Component(configurationPid = CoreLauncherComponent.PID, service = {}, immediate = true)
public final class CoreLauncherGate {

    private final ConfigurationGate<CoreLauncherComponent.Config> gate = new ConfigurationGate<>(CoreLauncherComponent.PID,
            CoreLauncherComponent.Config.class, c -> CoreLauncherSettings.of(c, System::getProperty, RankUser.isRoot()));

    @Activate
    void activate(ComponentContext context, Map<String, Object> properties) {
        gate.offer(properties, LoggerFactory.getLogger(CoreLauncherComponent.class)::error,
                () -> context.enableComponent(CoreLauncherComponent.PID));
    }

    @Modified
    void modified(ComponentContext context, Map<String, Object> properties) {
        gate.offerChange(properties, LoggerFactory.getLogger(CoreLauncherComponent.class)::error,
                () -> context.enableComponent(CoreLauncherComponent.PID));
    }
}
