package org.mpiproxy.launcher.local.internal;

import java.util.Map;

import org.mpiproxy.api.config.ConfigurationGate;
import org.mpiproxy.process.RankUser;
import org.osgi.service.component.ComponentContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Modified;
import org.slf4j.LoggerFactory;

/**
 * Enables {@link LocalLauncherComponent} (declared disabled) once its configuration is good: until then a
 * bad value is one line in the log, and the local launcher is not started and not registered.
 */
@Component(configurationPid = LocalLauncherComponent.PID, service = {}, immediate = true)
public final class LocalLauncherGate {

    private final ConfigurationGate<LocalLauncherComponent.Config> gate = new ConfigurationGate<>(LocalLauncherComponent.PID,
            LocalLauncherComponent.Config.class, c -> LocalLauncherSettings.of(c, System::getProperty, RankUser.isRoot()));

    @Activate
    void activate(ComponentContext context, Map<String, Object> properties) {
        gate.offer(properties, LoggerFactory.getLogger(LocalLauncherComponent.class)::error,
                () -> context.enableComponent(LocalLauncherComponent.PID));
    }

    @Modified
    void modified(ComponentContext context, Map<String, Object> properties) {
        gate.offerChange(properties, LoggerFactory.getLogger(LocalLauncherComponent.class)::error,
                () -> context.enableComponent(LocalLauncherComponent.PID));
    }
}
