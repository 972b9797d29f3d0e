package org.mpiproxy.launcher.local.internal;

import org.mpiproxy.api.LaunchException;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.RankProcess;
import org.mpiproxy.api.RankOutputListener;
import org.mpiproxy.launcher.OutputListeners;
import org.mpiproxy.launcher.RankEnvironment;
import org.mpiproxy.launcher.RankUser;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Modified;
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

    private final OutputListeners outputListeners = new OutputListeners();
    private volatile LocalProcessLauncher launcher;

    /**
     * @param config the component configuration
     * @throws IllegalArgumentException when a value is bad, naming its key and the value
     */
    @Activate
    public LocalLauncherComponent(Config config) {
        launcher = create(LocalLauncherSettings.of(config, System::getProperty, RankUser.isRoot()));
        LOG.info("Local launcher started, programs in {}", launcher.programDirectory());
    }

    /**
     * Applies a new configuration in place: ranks started from now on use it, running ranks are
     * not touched. A bad value is logged, naming its key and the value, and the last good
     * configuration stays.
     *
     * @param config the new configuration
     */
    @Modified
    void modified(Config config) {
        String problem = reconfigure(config);
        if (problem != null) {
            LOG.error("{}: {}; keeping the last good configuration, programs in {}", PID, problem,
                    launcher.programDirectory());
        } else {
            LOG.info("Local launcher reconfigured, programs in {}", launcher.programDirectory());
        }
    }

    /**
     * @param config the new configuration
     * @return {@code null} when it was applied, else why not ({@code key=value ...})
     */
    String reconfigure(Config config) {
        try {
            launcher = create(LocalLauncherSettings.of(config, System::getProperty, RankUser.isRoot()));
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    private LocalProcessLauncher create(LocalLauncherSettings settings) {
        return new LocalProcessLauncher(settings.programDirectory(), System.getProperty("java.home"),
                outputListeners, settings.allowlist(), settings.rankUser());
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

    @Override
    public RankProcess launch(LaunchRequest request) throws LaunchException {
        return launcher.launch(request);
    }

    @Override
    public java.nio.file.Path programDirectory() {
        return launcher.programDirectory();
    }
}
