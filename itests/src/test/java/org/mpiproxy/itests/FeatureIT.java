package org.mpiproxy.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.karaf.shell.api.console.Command;
import org.apache.karaf.shell.api.console.SessionFactory;
import org.junit.Test;
import org.mpiproxy.api.DatagramTransport;
import org.osgi.framework.Bundle;
import org.osgi.framework.Constants;
import org.osgi.service.component.runtime.dto.ComponentConfigurationDTO;

/**
 * The {@code mpiproxy} feature as the distribution boots it: bundles, components, commands
 * and programs.
 */
public class FeatureIT extends MpiProxyTestSupport {

    @Test
    public void shouldStartEveryBundleOfTheFeature() {
        awaitCondition(() -> notActive().isEmpty(), TIMEOUT, () -> "bundles not active: " + notActive());
        for (String bsn : FEATURE_BUNDLES) {
            assertEquals(bsn + " state", "ACTIVE", stateName(bundle(bsn).getState()));
        }
    }

    @Test
    public void shouldActivateTheComponentsOfTheProxyBundles() {
        for (String bsn : FEATURE_BUNDLES) {
            Bundle bundle = bundle(bsn);
            awaitCondition(() -> inactiveComponents(bundle).isEmpty(), TIMEOUT,
                    () -> bsn + " components not active: " + inactiveComponents(bundle));
        }
        assertFalse("the proxy bundle declares no component", components(bundle("org.mpiproxy.proxy")).isEmpty());
    }

    @Test
    public void shouldListenOnTheConfiguredUdpPort() {
        DatagramTransport transport = awaitService(DatagramTransport.class, null);
        awaitCondition(() -> transport.localAddress() != null && transport.localAddress().getPort() == udpPort(),
                TIMEOUT, () -> "transport bound to " + transport.localAddress() + ", configured " + proxyAddress());
        assertEquals(proxyAddress().getAddress(), transport.localAddress().getAddress());
    }

    @Test
    public void shouldRegisterAndRunTheJobsCommand() throws Exception {
        SessionFactory sessionFactory = awaitService(SessionFactory.class, null);
        awaitCondition(() -> hasCommand(sessionFactory, "mpi", "jobs"), TIMEOUT,
                () -> "no mpi:jobs command registered");

        String output = executeCommand("mpi:jobs");

        assertFalse("mpi:jobs printed nothing", output.isBlank());
        assertTrue("no jobs expected on a fresh node, got " + jobs(), jobs().isEmpty());
    }

    @Test
    public void shouldShipExecutablePrograms() {
        for (String name : List.of("mpiping", "mpiprime", "mpiecho", "mpiping.lz4", "mpiprime.lz4", "mpiecho.lz4")) {
            Path program = programsDirectory().resolve(name);
            assertTrue(program + " missing", Files.isRegularFile(program));
            assertTrue(program + " not executable", Files.isExecutable(program));
        }
        assertTrue("hostfile missing", Files.isRegularFile(programsDirectory().resolve("hostfile")));
    }

    private List<String> notActive() {
        List<String> problems = new ArrayList<>();
        for (Bundle bundle : bundleContext.getBundles()) {
            boolean fragment = bundle.getHeaders().get(Constants.FRAGMENT_HOST) != null;
            int expected = fragment ? Bundle.RESOLVED : Bundle.ACTIVE;
            if (bundle.getState() != expected) {
                problems.add(bundle.getSymbolicName() + " " + stateName(bundle.getState()));
            }
        }
        return problems;
    }

    /** Components that are neither active nor satisfied-and-delayed, with their state. */
    private List<String> inactiveComponents(Bundle bundle) {
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, List<ComponentConfigurationDTO>> component : components(bundle).entrySet()) {
            if (component.getValue().isEmpty()) {
                problems.add(component.getKey() + " has no configuration (disabled or configuration missing)");
            }
            for (ComponentConfigurationDTO configuration : component.getValue()) {
                boolean delayed = !configuration.description.immediate
                        && configuration.state == ComponentConfigurationDTO.SATISFIED;
                if (configuration.state != ComponentConfigurationDTO.ACTIVE && !delayed) {
                    problems.add(component.getKey() + " state " + configuration.state
                            + (configuration.failure == null ? "" : " failure " + configuration.failure)
                            + " unsatisfied " + List.of(configuration.unsatisfiedReferences).stream()
                                    .map(reference -> reference.name + " " + reference.target).toList());
                }
            }
        }
        return problems;
    }

    private static boolean hasCommand(SessionFactory sessionFactory, String scope, String name) {
        for (Command command : sessionFactory.getRegistry().getCommands()) {
            if (scope.equals(command.getScope()) && name.equals(command.getName())) {
                return true;
            }
        }
        return false;
    }
}
