package org.mpiproxy.launcher.local.internal;

import java.util.Map;
import java.util.function.Consumer;

import org.mpiproxy.api.LaunchException;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.RankProcess;
import org.mpiproxy.api.RankOutputListener;
import org.mpiproxy.api.config.CheckedConfiguration;
import org.mpiproxy.process.OutputListeners;
import org.mpiproxy.process.RankEnvironment;
import org.mpiproxy.process.RankProcessStarter;
import org.mpiproxy.process.RankUser;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
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
@Component(name = LocalLauncherComponent.PID, enabled = false, service = ProcessLauncher.class,
        property = {ProcessLauncher.KIND + "=" + ProcessLauncher.KIND_LOCAL, ProcessLauncher.CORES + "=0"})
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

        @AttributeDefinition(name = "Program path",
                description = "Comma-separated absolute directories searched, in order, after the program directory"
                        + " for the programs of plain EXECs (v2, authenticated: any program on every slot, such as"
                        + " hostname or an MPICH program). Names are never paths; a link must stay inside its"
                        + " directory. Empty: the program directory only.")
        String program_path() default "";

        @AttributeDefinition(name = "Environment allowlist",
                description = "Comma-separated variables of the proxy's environment that ranks get (a trailing *"
                        + " matches any suffix); ranks also get what the job asked for, JAVA_HOME and MPIPROXY_*.")
        String environment_allowlist() default RankEnvironment.DEFAULT_ALLOWLIST;

        @AttributeDefinition(name = "Rank user",
                description = "Numeric <uid>:<gid> ranks run as (through setpriv) when the proxy runs as root; give"
                        + " org.mpiproxy.channel.shm the same owner.user. Empty means the proxy's own user. The ranks"
                        + " of a job a user started with a job credential run as that user instead.")
        String rank_user() default "";
    }

    /** The last good configuration of this bundle's launcher, kept across re-activations. */
    private static final CheckedConfiguration<Config> CONFIGURATIONS = new CheckedConfiguration<>(PID, Config.class, LOG::warn);

    private final CheckedConfiguration<Config> configurations;
    /** Where the one-line configuration problems go. */
    private final Consumer<String> problems;
    private final OutputListeners outputListeners = new OutputListeners();
    /** Set when this component stops: see {@link #deactivate()}. */
    private volatile boolean stopping;
    private volatile LocalProcessLauncher launcher;

    /**
     * Checks the raw configuration: bad values are logged in one line, and the launcher then
     * starts with the last good configuration, or, with none yet, does not start.
     *
     * @param properties the raw configuration properties
     * @throws org.mpiproxy.api.config.RejectedConfigurationException when a value is bad and there
     *                                                                is no last good configuration
     */
    @Activate
    public LocalLauncherComponent(Map<String, Object> properties) {
        this(properties, CONFIGURATIONS, LOG::error);
    }

    /**
     * @param properties     the raw configuration properties
     * @param configurations checks them and remembers the last good configuration
     * @param problems       gets each one-line configuration problem
     */
    LocalLauncherComponent(Map<String, Object> properties, CheckedConfiguration<Config> configurations,
            Consumer<String> problems) {
        this(configurations.activation(properties, c -> LocalLauncherSettings.of(c, System::getProperty, RankUser.isRoot()),
                line -> problems.accept(PID + ": " + line)), configurations, problems);
    }

    /**
     * @param config the component configuration
     * @throws IllegalArgumentException when a value is bad, naming its key and the value
     */
    LocalLauncherComponent(Config config) {
        this(config, new CheckedConfiguration<>(Config.class), LOG::error);
    }

    private LocalLauncherComponent(Config config, CheckedConfiguration<Config> configurations, Consumer<String> problems) {
        this.configurations = configurations;
        this.problems = problems;
        launcher = create(LocalLauncherSettings.of(config, System::getProperty, RankUser.isRoot()));
        LOG.info("Local launcher started, programs in {}; ranks spawn with {}", launcher.programDirectory(),
                RankProcessStarter.spawnMethod());
    }

    /**
     * Applies a new configuration in place: ranks started from now on use it, running ranks are
     * not touched. A bad value is logged, naming its key and the value, and the last good
     * configuration stays.
     *
     * @param properties the new raw configuration properties
     */
    @Modified
    void modified(Map<String, Object> properties) {
        String problem;
        try {
            problem = reconfigure(configurations.typed(properties));
        } catch (IllegalArgumentException e) {
            problem = e.getMessage();
        }
        if (problem != null) {
            problems.accept(configurations.refused(PID + ": " + problem + "; keeping the last good configuration, programs in "
                    + launcher.programDirectory()));
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
            configurations.remember(config);
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    private LocalProcessLauncher create(LocalLauncherSettings settings) {
        return new LocalProcessLauncher(settings.programDirectory(), System.getProperty("java.home"),
                outputListeners, settings.allowlist(), settings.rankUser(), settings.programPath());
    }

    /** @param listener receives the output of ranks started from now on */
    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            unbind = "removeOutputListener")
    void addOutputListener(RankOutputListener listener) {
        outputListeners.add(listener);
    }

    void removeOutputListener(RankOutputListener listener) {
        if (!stopping) {
            outputListeners.remove(listener);
        }
    }

    /**
     * The ranks this component started keep writing to the listeners they had when it stops (an
     * update of this bundle): a proxy's listener that goes away later hands their lines on to the
     * proxy's next revision.
     */
    @Deactivate
    void deactivate() {
        stopping = true;
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
