package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.HealthResult;
import org.mpiproxy.api.HealthResult.Status;
import org.mpiproxy.api.config.CheckedConfiguration;
import org.mpiproxy.api.config.ConfigurationReports;
import org.mpiproxy.api.config.RejectedConfigurationException;

/**
 * mpi:health shows a refused configuration value until it is fixed (WARN while the component runs
 * on its last good configuration, CRITICAL while it has none), and each unknown key, warned about
 * once in the log.
 */
class ConfigurationHealthTest {

    private final ConfigurationReports reports = new ConfigurationReports();
    private final List<String> errors = new ArrayList<>();
    private final List<String> warnings = new ArrayList<>();
    private final CheckedConfiguration<ProxyConfig> proxyConfigurations =
            new CheckedConfiguration<>(ProxyComponent.PID, ProxyConfig.class, warnings::add, reports);

    @TempDir
    Path dir;

    private Map<String, Object> goodProxy() {
        Map<String, Object> m = new HashMap<>();
        m.put("log.directory", dir.resolve("logs").toString());
        m.put("state.directory", dir.resolve("state").toString());
        m.put("stop.grace.seconds", "3");
        m.put("startup.wait.seconds", "0");
        m.put("launch.threads", "2");
        m.put("v2.enabled", "false");
        return m;
    }

    /** The health checks of this node, reading {@link #reports}. */
    private List<HealthResult> configChecks() {
        HealthCheckComponent health = new HealthCheckComponent(TestConfigs.of(HealthCheckComponent.Config.class,
                Map.of()));
        health.reports = reports;
        List<HealthResult> config = new ArrayList<>();
        for (HealthResult r : health.check()) {
            if (r.check().startsWith(NodeHealth.CONFIG)) {
                config.add(r);
            }
        }
        return config;
    }

    @Test
    void shouldWarnWithTheReasonWhileABadValueIsRefusedAndBeOkOnceItIsFixed() {
        assertEquals(List.of(Status.OK), statuses(configChecks()));
        ProxyComponent proxy = new ProxyComponent(goodProxy(), proxyConfigurations, errors::add);
        try {
            Map<String, Object> bad = goodProxy();
            bad.put("stop.grace.seconds", "ten");
            proxy.modified(bad);

            String reason = ProxyComponent.PID + ": stop.grace.seconds=ten is not a whole number;"
                    + " keeping the last good configuration";
            assertEquals(List.of(reason), errors);
            assertEquals(List.of(new HealthResult("config." + ProxyComponent.PID, Status.WARN, reason)),
                    configChecks());

            Map<String, Object> flase = goodProxy();
            flase.put("v1.enabled", "flase");
            proxy.modified(flase);
            assertEquals(List.of(new HealthResult("config." + ProxyComponent.PID, Status.WARN,
                    ProxyComponent.PID + ": v1.enabled=flase is not true or false; keeping the last good"
                            + " configuration")), configChecks());

            proxy.modified(goodProxy());
            assertEquals(List.of(new HealthResult(NodeHealth.CONFIG, Status.OK,
                    "every configuration is in force as given, with no unknown key")), configChecks());
        } finally {
            proxy.deactivate();
        }
    }

    @Test
    void shouldBeCriticalWhileTheFirstConfigurationIsBad() {
        Map<String, Object> bad = goodProxy();
        bad.put("stop.grace.seconds", "ten");
        ProxyComponent proxy = new ProxyComponent(bad, proxyConfigurations, errors::add);
        assertThrows(RejectedConfigurationException.class, proxy::activate);

        List<HealthResult> checks = configChecks();
        assertEquals(List.of(new HealthResult("config." + ProxyComponent.PID, Status.CRITICAL,
                ProxyComponent.PID + ": stop.grace.seconds=ten is not a whole number; no good configuration yet:"
                        + " not started until the value is fixed")), checks);
    }

    @Test
    void shouldWarnAboutAnUnknownKeyOnceAndNameItWithTheClosestKey() {
        Map<String, Object> misspelt = goodProxy();
        misspelt.put("stop.grace.second", "10");
        ProxyComponent proxy = new ProxyComponent(misspelt, proxyConfigurations, errors::add);
        try {
            for (int i = 0; i < 3; i++) {
                misspelt.put("launch.threads", String.valueOf(1 + i));
                proxy.modified(misspelt);
            }
            String line = ProxyComponent.PID + ": unknown key stop.grace.second (did you mean stop.grace.seconds?);"
                    + " ignored";
            assertEquals(List.of(line), warnings);
            assertEquals(List.of(), errors);
            assertEquals(List.of(new HealthResult("config." + ProxyComponent.PID, Status.WARN, line)), configChecks());

            proxy.modified(goodProxy());
            assertEquals(List.of(Status.OK), statuses(configChecks()));
        } finally {
            proxy.deactivate();
        }
    }

    @Test
    void shouldNeverReportKarafsOwnKeys() {
        Map<String, Object> withKarafKeys = goodProxy();
        withKarafKeys.put("service.pid", ProxyComponent.PID);
        withKarafKeys.put("felix.fileinstall.filename", "file:/opt/karaf/etc/" + ProxyComponent.PID + ".cfg");
        withKarafKeys.put("component.name", ProxyComponent.PID);
        withKarafKeys.put("component.id", 12L);
        // what Declarative Services adds to a component's properties: its condition and reference targets
        withKarafKeys.put("osgi.ds.satisfying.condition.target", "(osgi.condition.id=true)");
        withKarafKeys.put("launcher.target", "(kind=local)");
        withKarafKeys.put("Output.target", "(kind=local)");
        // and a service property a component declares itself
        withKarafKeys.put("mpiproxy.launcher", "local");
        ProxyComponent proxy = new ProxyComponent(withKarafKeys, proxyConfigurations, errors::add);
        try {
            proxy.modified(withKarafKeys);
            assertEquals(List.of(), warnings);
            assertEquals(List.of(Status.OK), statuses(configChecks()));
        } finally {
            proxy.deactivate();
        }
    }

    private static List<Status> statuses(List<HealthResult> results) {
        List<Status> statuses = new ArrayList<>();
        results.forEach(r -> statuses.add(r.status()));
        return statuses;
    }
}
