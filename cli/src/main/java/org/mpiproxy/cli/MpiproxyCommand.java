package org.mpiproxy.cli;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;

/** {@code mpiproxy}: the command-line launcher's entry point. */
@Command(name = "mpiproxy", mixinStandardHelpOptions = true, version = "mpiproxy 0.1.0",
        description = "Runs MPI-style jobs on nodes served by MPI proxies, from hostfiles or a Slurm allocation.",
        subcommands = CommandLine.HelpCommand.class)
public final class MpiproxyCommand implements Runnable {

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "give a command: run, status or kill");
    }

    /**
     * @param args the command line
     */
    public static void main(String[] args) {
        System.exit(execute(args, System.getenv(), System.out, System.err));
    }

    /**
     * @param args the command line
     * @param env  the environment
     * @param out  standard output
     * @param err  standard error
     * @return the exit status
     */
    static int execute(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        return commandLine(new RunCommand.Launch(env, out, err)).execute(args);
    }

    /** As {@link #execute(String[], Map, PrintStream, PrintStream)}, with the job's time limit on {@code clock}. */
    static int execute(String[] args, Map<String, String> env, PrintStream out, PrintStream err,
                       java.util.function.LongSupplier clock) {
        return commandLine(new RunCommand.Launch(env, out, err, clock)).execute(args);
    }

    /** As {@link #execute(String[], Map, PrintStream, PrintStream)}, for the caller {@code launch} describes. */
    static int execute(String[] args, RunCommand.Launch launch) {
        return commandLine(launch).execute(args);
    }

    /**
     * The launcher's command line: single-dash words are option names only as written (Hydra's
     * {@code -hosts}, {@code -genv}, ...), never clusters of one-letter options, so that an
     * unknown one is refused instead of read as {@code -h} and more; bad usage is one line on
     * standard error and exit status 2.
     *
     * @param launch the environment and streams
     * @return the command line, ready to execute or parse
     */
    static CommandLine commandLine(RunCommand.Launch launch) {
        PrintStream err = launch.err();
        CommandLine cli = new CommandLine(new MpiproxyCommand())
                .addSubcommand("run", new RunCommand(launch))
                .addSubcommand("status", new StatusCommand(launch))
                .addSubcommand("kill", new KillCommand(launch));
        cli.getSubcommands().get("run").setStopAtPositional(true);
        cli.setPosixClusteredShortOptionsAllowed(false);
        cli.setOut(new PrintWriter(launch.out(), true, StandardCharsets.UTF_8));
        cli.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
        cli.setExitCodeExceptionMapper(e -> 2);
        cli.setParameterExceptionHandler((e, a) -> {
            err.println("mpiproxy: " + usageProblem(e));
            return 2;
        });
        return cli;
    }

    /** @return the one line that says what is wrong with the command line and where the options are listed */
    static String usageProblem(CommandLine.ParameterException e) {
        CommandLine.Model.CommandSpec command = e.getCommandLine().getCommandSpec();
        boolean top = command.parent() == null;
        String help = "(" + command.qualifiedName() + " --help lists the " + (top ? "commands" : "options") + ")";
        if (e instanceof CommandLine.UnmatchedArgumentException unmatched && !unmatched.getUnmatched().isEmpty()) {
            String first = unmatched.getUnmatched().get(0);
            String what = first.startsWith("-") ? "unknown option" : top ? "unknown command" : "unexpected argument";
            return what + " '" + first + "' " + help;
        }
        return e.getMessage() + " " + help;
    }
}
