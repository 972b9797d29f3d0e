package org.mpiproxy.launcher.local.internal;

import org.mpiproxy.api.LaunchException;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.RankProcess;
import org.mpiproxy.api.RankOutputListener;
import org.mpiproxy.launcher.LauncherDirectories;
import org.mpiproxy.launcher.OutputListeners;
import org.mpiproxy.launcher.RankCommand;
import org.mpiproxy.launcher.RankEnvironment;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** DS adapter: registers a {@link LocalProcessLauncher} for core 0. */
@Component(name = LocalLauncherComponent.PID, service = ProcessLauncher.class,
        property = ProcessLauncher.KIND + "=" + ProcessLauncher.KIND_LOCAL)
@Designate(ocd = LocalLauncherComponent.Config.class)
public final class LocalLauncherComponent implements ProcessLauncher {

    static final String PID = "org.mpiproxy.launcher.local";

    private static final Logger LOG = LoggerFactory.getLogger(LocalLauncherComponent.class);

    /** Configuration of the local launcher. */
    @ObjectClassDefinition(name = "MPI proxy local launcher",
            description = "Starts rank programs on the proxy's own core (coreId 0).")
    public @interface Config {

        @AttributeDefinition(name = "Program directory",
                description = "Directory holding the executable rank programs, named by EXEC."
                        + " Empty means ${karaf.home}/programs.")
        String program_directory() default "";

        @AttributeDefinition(name = "Environment allowlist",
                description = "Comma-separated variables of the proxy's environment that ranks get (a trailing *"
                        + " matches any suffix); ranks also get what the job asked for, JAVA_HOME and MPIPROXY_*.")
        String environment_allowlist() default RankEnvironment.DEFAULT_ALLOWLIST;

        @AttributeDefinition(name = "Rank user",
                description = "Numeric <uid>:<gid> ranks run as (through setpriv) when the proxy runs as root; give"
                        + " org.mpiproxy.channel.shm the same owner.user. Empty means the proxy's own user.")
        String rank_user() default "";
    }

    private final LocalProcessLauncher launcher;
    private final OutputListeners outputListeners = new OutputListeners();

    /**
     * @param config the component configuration
     */
    @Activate
    public LocalLauncherComponent(Config config) {
        launcher = new LocalProcessLauncher(
                LauncherDirectories.programDirectory(config.program_directory(), System::getProperty),
                System.getProperty("java.home"), outputListeners,
                RankEnvironment.parseAllowlist(config.environment_allowlist()), rankUser(config.rank_user()));
        LOG.info("Local launcher started, programs in {}", launcher.programDirectory());
    }

    /** @param listener receives the output of ranks started from now on */
    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            unbind = "removeOutputListener")
    void addOutputListener(RankOutputListener listener) {
        outputListeners.add(listener);
    }

    void removeOutputListener(RankOutputListener listener) {
        outputListeners.remove(listener);
    }

    static long[] rankUser(String value) {
        long[] user = RankCommand.parseUser(value);
        if (user != null && !isRoot()) {
            throw new IllegalArgumentException("rank.user=" + value + " needs the proxy to run as root");
        }
        return user;
    }

    private static boolean isRoot() {
        try {
            return ((Number) java.nio.file.Files.getAttribute(java.nio.file.Path.of("/proc/self"), "unix:uid"))
                    .longValue() == 0;
        } catch (java.io.IOException | RuntimeException e) {
            return false;
        }
    }

    @Override
    public RankProcess launch(LaunchRequest request) throws LaunchException {
        return launcher.launch(request);
    }
}
